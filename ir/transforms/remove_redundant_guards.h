/// \file Redundant guard elimination: branches whose condition the enclosing loops and branches
/// already imply.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Drops each conjunct of an `if` condition (without else) that provably holds: an affine
/// integer comparison that holds for every value of the enclosing loop variables (symbolic
/// extents included: `i < n` inside `for i in [0, n)`), or that an enclosing `if` condition or
/// a sibling conjunct implies (a duplicate, a looser bound of the same form, or the bound of a
/// split's outer extent: `x < (n + 3) / 4` given `x * 4 + v < n`, v >= 0). An `if` left with
/// no conjunct becomes its body. Unbound integer variables are symbolic dimensions, taken as >= 0.
Stmt RemoveRedundantGuards(const Stmt& s);

}  // namespace cinn_like::ir
