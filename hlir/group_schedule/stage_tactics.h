/// \file Tactics for one stage scheduled alone: a kernel (GPUs) or loop nest (CPUs) whose
/// stage no group tactic took (elementwise and injective roots, reductions that stay
/// kernels of their own, matmul accumulators).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlir/group_schedule/tactic.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

enum class StageKind : uint8_t { kElementwise, kReduction, kMatmul };

/// Whether GPU row reduction `s` has too few rows to fill the device (two blocks per
/// multiprocessor) and rows long enough to split across blocks (16384 elements or more, a reduce
/// axis splitting evenly into chunks of 4096 or more: not a row of 50257), and reduces
/// `min_elements` or more in all: alone, its rows are split into chunks, partials then their sum
/// (row_reduction.two_stage).
bool FewLongRows(const ir::Stage& s, const ir::Target& target, int64_t min_elements = 0);

/// Schedules `stage` (not inlined, not yet scheduled) for `target`:
///  - CPUs: the outermost loop parallel when the stage is large (or symbolic) and the target
///    has parallel loops; elementwise stages vectorize their innermost loop by the target's
///    float32 vector lanes (8 on x86) when its extent is a known multiple of them.
///  - GPUs: elementwise and matmul stages fuse their spatial axes, split them by 256 and bind
///    blockIdx.x / threadIdx.x (matmul: each thread runs its k loop); elementwise stages
///    whose innermost extent is a known multiple of the lanes of one widest vector access
///    (16 bytes: 4 floats, 8 halves, 2 doubles) first split off that many lanes per thread; a
///    layout change (a load's innermost dim indexed by an outer output axis that is not the
///    second innermost) puts neighbouring threads along that axis instead. Row
///    reductions (a reduce axis indexes the last dimension of a load) bind the fused spatial axes
///    to blockIdx.x and the inner split of the fused reduce axes to threadIdx.x (a block reduce);
///    column reductions are scheduled as matmul (threads over the contiguous spatial axis, a serial
///    reduce loop). Float32 matmuls that tile (matmul_tactic.h) get shared-memory tiles.
/// `knob` is the tuner's value for the tactic's knob (TacticChoice::knob; 0: its own): the
/// vector width of CPU elementwise loops, the bytes per access of GPU elementwise vector kernels,
/// the threads per row of a GPU row reduction alone, the chunks of a two-stage column reduction.
/// `warp_rows`: a GPU row reduction of symbolic length takes a warp per row (a bucket of short
/// rows, hlir/row_buckets.h) instead of cinn_like_symbolic_row_threads.
absl::StatusOr<TacticChoice> ScheduleStage(ir::Schedule& sch, ir::Stage& stage, StageKind kind,
                                           const ir::Target& target, int knob = 0,
                                           bool warp_rows = false);

}  // namespace cinn_like::hlir
