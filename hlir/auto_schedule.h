/// \file Default schedules of the graph compiler: one per computed stage, chosen by the target
/// and by what the stage computes (elementwise/injective, reduction, matmul).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

enum class StageKind : uint8_t { kElementwise, kReduction, kMatmul };

/// True when no load of the reduction stage's body indexes its last dimension with a reduce
/// axis: the reduced axes are not the contiguous one (a column reduction).
bool IsColumnReduction(const ir::Stage& s);

/// Threads of a block reducing `extent` elements per row (-1: unknown): 256, or fewer for a
/// short row (a multiple of the target's warp size covering it).
int RowThreads(int64_t extent, const ir::Target& target);

/// Fuses the adjacent leaves `vars` (outermost first, at least one) of `s` into one loop.
absl::StatusOr<ir::Var> FuseAll(ir::Stage& s, const std::vector<ir::Var>& vars);

/// Schedules `stage` (not inlined, not yet scheduled) for `target`, by its traits:
///  - CPUs: the outermost loop parallel when the stage is large (or symbolic) and the target
///    has parallel loops; elementwise stages vectorize their innermost loop by the target's
///    float32 vector lanes (8 on x86) when its extent is a known multiple of them.
///  - GPUs: elementwise and matmul stages fuse their spatial axes, split them by 256 and bind
///    blockIdx.x / threadIdx.x (matmul: each thread runs its k loop); float32 elementwise
///    stages whose innermost extent is a known multiple of the target's float32 vector lanes
///    (4: float4) first split off that many lanes per thread. Row reductions (a reduce axis
///    indexes the last dimension of a load) bind the fused spatial axes to blockIdx.x and the
///    inner split of the fused reduce axes to threadIdx.x (a block reduce, as the row_sum
///    example); column reductions are scheduled as matmul (threads over the contiguous spatial
///    axis, a serial reduce loop).
absl::Status AutoSchedule(ir::Stage& stage, StageKind kind, const ir::Target& target);

/// GPU matmul tiles, for targets with shared memory (as the matmul_shared example,
/// tools/examples.h): 64x64 output tiles per block of 16x16 threads, 4x4 accumulators per
/// thread in registers (cache_write local), k slices of 8 staged in shared memory (cache_read +
/// compute_at). Applies when
/// CanTileMatmul: a float32 sum over one reduce axis into a rank-2 output whose extents are
/// static multiples of the tiles, reading exactly two materialized tensors.
bool CanTileMatmul(const ir::Schedule& sch, const ir::Stage& stage);
absl::Status TileMatmul(ir::Schedule& sch, const ir::Tensor& c);

}  // namespace cinn_like::hlir
