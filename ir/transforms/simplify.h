/// \file Arithmetic simplification: constant folding, identities, ramp/broadcast algebra, and
/// facts from loop bounds (a guard that always holds disappears).
#pragma once

#include <cstdint>
#include <map>

#include "ir/ir.h"

namespace cinn_like::ir {

/// Simplifies an expression. Integer Variables not bound by an enclosing loop are assumed
/// non-negative (they are symbolic dimensions or loop indices in this IR).
Expr Simplify(const Expr& e);

/// A positive number every value of the integer expression `e` is a multiple of (1 when
/// nothing is known; capped at 2^30): from constants, +, -, *, % and integer casts, and the
/// divisors `lets` knows of variables (LetStmts whose values were measured the same way).
int64_t KnownDivisor(const Expr& e, const std::map<const Variable*, int64_t>* lets = nullptr);

/// Simplifies every expression of a statement using the ranges of enclosing loops; removes
/// branches with constant conditions, empty loops, and serial loops of extent 1.
Stmt Simplify(const Stmt& s);

}  // namespace cinn_like::ir
