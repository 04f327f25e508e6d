/// \file Affine forms of integer index expressions (c0 + sum c_k * atom_k) and the bounds they
/// take over loop ranges: the arithmetic shared by guard removal, loop partitioning and
/// vectorization with a scalar tail.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/structural_equal.h"

namespace cinn_like::ir {

/// constant + sum coeff * atom over scalar integers. An atom is a Variable or any subterm that
/// is not affine (a Div, a Load, a product of two variables); equal atoms are merged.
struct LinearForm {
  int64_t constant = 0;
  std::vector<std::pair<Expr, int64_t>> terms;  // (atom, nonzero coefficient)

  /// The affine form of a scalar integer expression.
  static LinearForm Of(const Expr& e);
  /// Adds scale * other.
  void Add(const LinearForm& other, int64_t scale = 1);
  /// The coefficient of variable v (0 when v is absent or occurs only inside an atom).
  int64_t Coeff(const Variable* v) const;
  /// This form without v's term.
  LinearForm Without(const Variable* v) const;
  /// True when v occurs inside a non-affine atom (so the form is not affine in v).
  bool UsesInsideAtom(const Variable* v) const;
  /// The form as an expression of type t (an int type).
  Expr ToExpr(Type t) const;
};

/// Inclusive range of a loop variable: min <= v <= max. An empty loop has max < min; any claim
/// about its body holds vacuously.
struct VarRange {
  Expr min, max;
};
using RangeMap = std::unordered_map<const Variable*, VarRange>;

/// An upper bound of `form`: each variable of `ranges` is replaced by its max (positive
/// coefficient) or min (negative), repeatedly, since ranges may mention other variables.
LinearForm UpperBound(LinearForm form, const RangeMap& ranges);

/// Whether an expression is provably >= 0: constants, variables not in `ranges` (symbolic
/// dimensions), and sums, products, quotients, remainders, min and max of such.
bool ProvablyNonNegative(const Expr& e, const RangeMap& ranges);

/// Whether form <= 0 for every value of the variables in `ranges`: its upper bound is a constant
/// <= 0 plus non-negative atoms with negative coefficients.
bool ProvablyNonPositive(const LinearForm& form, const RangeMap& ranges);

/// A comparison a < b, a <= b, a > b or a >= b of scalar integers as the claim `form <= 0`
/// (a < b is a - b + 1 <= 0); nullopt for any other condition.
std::optional<LinearForm> AsNonPositiveClaim(const Expr& cond);

/// A condition independent of `v` that holds exactly when `guard` holds for every v in
/// [min, min + count), for guards that are conjunctions of comparisons affine in v (each is
/// checked at the one end of the range where it is tightest; the conjuncts without v are
/// kept); undefined when the guard is not of that form.
Expr HoldsForEveryValue(const Expr& guard, const Variable* v, const Expr& min, int64_t count);

/// The conjuncts of a condition: (a && b) && c gives {a, b, c}.
std::vector<Expr> SplitConjunction(const Expr& cond);
/// The conjunction of conds; true when empty.
Expr JoinConjunction(const std::vector<Expr>& conds);

}  // namespace cinn_like::ir
