/// \file The GPU matmul tactic, for targets with shared memory (as the matmul_shared
/// example, tools/examples.h): 64x64 output tiles per block of 16x16 threads, 4x4 accumulators
/// per thread in registers (cache_write local), k slices of 8 staged in shared memory
/// (cache_read + compute_at).
#pragma once

#include "absl/status/status.h"
#include "ir/schedule.h"

namespace cinn_like::hlir {

/// Whether TileMatmul applies: a float32 sum over one reduce axis into a rank-2 output whose
/// extents are static multiples of the tiles, reading exactly two materialized tensors.
bool CanTileMatmul(const ir::Schedule& sch, const ir::Stage& stage);
absl::Status TileMatmul(ir::Schedule& sch, const ir::Tensor& c);

}  // namespace cinn_like::hlir
