/// \file Default schedules of the graph compiler: one per computed stage, chosen by the target
/// and by what the stage computes (elementwise/injective, reduction, matmul).
#pragma once

#include "absl/status/status.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

enum class StageKind : uint8_t { kElementwise, kReduction, kMatmul };

/// Schedules `stage` (not inlined, not yet scheduled) for `target`:
///  - x86: the outermost loop parallel when the stage is large (or symbolic); elementwise
///    stages vectorize their innermost loop by 8 when its extent is a known multiple of 8.
///  - NVGPU: elementwise and matmul stages fuse their spatial axes, split them by 256 and
///    bind blockIdx.x / threadIdx.x (matmul: each thread runs its k loop); reductions bind
///    the fused spatial axes to blockIdx.x and the inner split of the fused reduce axes to
///    threadIdx.x (a block reduce, as the row_sum example).
absl::Status AutoSchedule(ir::Stage& stage, StageKind kind, const ir::Target& target);

}  // namespace cinn_like::hlir
