/// \file Vectorization of loops the schedule marked kVectorized.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Replaces each kVectorized loop `for (v, min, L)` by its body evaluated once on L lanes:
/// v becomes ramp(min, 1, L), scalars that meet vectors are broadcast, loads and stores with a
/// vector index read and write every lane. A reduction update of one element,
/// `X[idx] = combine(X[idx], e)` with e lane-dependent (a GPU thread's partial), becomes
/// `X[idx] = combine(X[idx], vector_reduce_<kind>(e widened))`: the lanes combined first, then
/// into X (reassociated). A body that cannot run lane-parallel (a branch on a lane-dependent
/// condition with an else, another store of a vector value to one scalar location, a loop
/// whose extent depends on v, an allocation) keeps the loop serial and logs a warning naming it.
Stmt VectorizeLoops(const Stmt& s);

}  // namespace cinn_like::ir
