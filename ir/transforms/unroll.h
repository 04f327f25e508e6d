/// \file Full unrolling of loops the schedule marked kUnrolled.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Replaces each kUnrolled loop of constant extent (at most 512) by one copy of its body per
/// iteration. Longer or symbolic loops stay as serial loops (with a warning). kUnrollHint loops
/// are left to the backend. A loop of up to 64 iterations whose body has guards on its variable
/// (ifs on conjunctions of comparisons affine in it: the tails of splits of symbolic extents,
/// the vectorizer's vector-or-lanes choice) is versioned: `if (<the guards hold at the loop's
/// last iteration, and its first>) <copies of their then-cases> else <copies with them>`.
Stmt UnrollLoops(const Stmt& s);

}  // namespace cinn_like::ir
