/// \file Region inference for compute_at: index expressions as affine forms in loop variables,
/// and the box of indices a set of accesses touches while some loops run over their range.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace cinn_like::ir {

/// sum(coeff * term) + constant. A term is a variable or an opaque subexpression (anything
/// that is not + - or * by a constant), kept in order of first appearance; structurally equal
/// terms are one term, and so are quotients (remainders) of one affine sum by one divisor
/// however each is written.
struct AffineForm {
  struct Term {
    Expr expr;
    int64_t coeff;
  };
  std::vector<Term> terms;
  int64_t constant = 0;
};

/// `e` as an affine form; never fails (non-affine parts become opaque terms).
AffineForm Linearize(const Expr& e);
/// The form as an expression of type int32, terms in order, zero coefficients dropped.
Expr ToExpr(const AffineForm& form);
/// a - b.
AffineForm Subtract(const AffineForm& a, const AffineForm& b);

/// The range a relaxed loop variable runs over: [0, extent).
using RelaxedLoops = std::unordered_map<const Variable*, int64_t>;

/// The box read by `accesses` (index lists of one buffer) while the variables of `relaxed`
/// run over their ranges and every other variable is fixed: per dimension an origin (in
/// the fixed variables), a constant extent and a stride: element r of the region is index
/// min + stride * r. The stride is 1 except where every access steps by one relaxed loop
/// with the same coefficient c > 1 (a thread's strided share of a tile): then it is c and the
/// region holds only the elements touched. An error (with `what` in front) when an
/// index is not affine in the relaxed variables or the accesses disagree on fixed terms.
struct Region {
  std::vector<Expr> min;
  std::vector<int64_t> extent;
  std::vector<int64_t> stride;
};
absl::StatusOr<Region> InferRegion(const std::vector<std::vector<Expr>>& accesses,
                                   const RelaxedLoops& relaxed, const std::string& what);

/// thread_index(axis) (ir/intrinsics.h): what every loop bound to threadIdx.<axis> equals
/// inside its body. A local buffer's region is one thread's: loops bound to a thread index
/// are not relaxed but written as this, so that loops of different stages bound to the same
/// thread index name one value.
Expr ThreadIndexExpr(int axis);

}  // namespace cinn_like::ir
