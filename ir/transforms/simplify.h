/// \file Arithmetic simplification: constant folding, identities, ramp/broadcast algebra, and
/// facts from loop bounds (a guard that always holds disappears).
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Simplifies an expression. Integer Variables not bound by an enclosing loop are assumed
/// non-negative (they are symbolic dimensions or loop indices in this IR).
Expr Simplify(const Expr& e);

/// Simplifies every expression of a statement using the ranges of enclosing loops; removes
/// branches with constant conditions, empty loops, and serial loops of extent 1.
Stmt Simplify(const Stmt& s);

}  // namespace cinn_like::ir
