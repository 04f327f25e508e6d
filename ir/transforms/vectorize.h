/// \file Vectorization of loops the schedule marked kVectorized.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Replaces each kVectorized loop `for (v, min, L)` by its body evaluated once on L lanes:
/// v becomes ramp(min, 1, L), scalars that meet vectors are broadcast, loads and stores with a
/// vector index read and write every lane. A body that cannot run lane-parallel (a branch on
/// a lane-dependent condition, a store of a vector value to one scalar location, a loop whose
/// extent depends on v, an allocation) keeps the loop serial and logs a warning naming it.
Stmt VectorizeLoops(const Stmt& s);

}  // namespace cinn_like::ir
