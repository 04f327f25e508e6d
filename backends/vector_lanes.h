/// \file Vector expressions lane by lane, for source printers (CUDA C, OpenCL C) that print a
/// vector statement as its lanes or as vector accesses around scalar lanes.
#pragma once

#include <functional>

#include "ir/ir.h"

namespace cinn_like::backends {

/// The ramp of a dense (stride 1) vector index, else nullptr.
const ir::Ramp* DenseRamp(const ir::Expr& index);

/// Replaces a load (by lane) during lane extraction; returns an undefined Expr to keep it.
using LoadHook = std::function<ir::Expr(const ir::Load*, int lane)>;

/// Lane `k` of a vector expression as a scalar expression; scalars are returned as they are.
ir::Expr Lane(const ir::Expr& e, int k, const LoadHook& hook);

/// Whether `e` has a vector_reduce call (a GPU thread's partial reduced over a vector loop:
/// ir/transforms/vectorize.h).
bool HasVectorReduce(const ir::Expr& e);

/// `e` with each vector_reduce_<kind>(v) replaced by its lanes combined in order,
/// `combine(combine(v0, v1), v2)...`, each lane taken by Lane (loads through `hook`).
ir::Expr ExpandVectorReduces(const ir::Expr& e, const LoadHook& hook);

}  // namespace cinn_like::backends
