/// \file GPU tactics for a fusion group whose reductions are computed inside the kernel of the
/// group's one materialized consumer (softmax, layer_norm, a reduction's epilogue, matmul and
/// conv accumulators, pools).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "hlir/group_schedule/tactic.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

struct ReductionGroup {
  ir::Stage* consumer = nullptr;       // the one materialized non-reduction reading them
  std::vector<ir::Stage*> reductions;  // schedule order (producers first)
  int row_dims = 0;                    // the consumer's leading dims the reductions keep
  /// Stored values of one element per row of the group (outputs: a LayerNorm's mean and
  /// rstd) that the consumer reads: computed in the consumer's row into their own buffers
  /// (ir::Stage::ComputeAtOwnBuffer), every thread of the row storing the same value. Schedule
  /// order; only WarpPerRow and BlockPerRow take them.
  std::vector<ir::Stage*> row_outputs;
  /// Stored values of the consumer's shape that the group's reductions or consumer read and
  /// that read neither (outputs: a training forward's residual stream before its norm, saved
  /// for the backward): each row of them computed in the consumer's row into their own
  /// buffers, its elements over the row's threads as the consumer's are, so that each thread
  /// reads back only what it stored (ir::Stage::ComputeAtOwnBuffer). Schedule order; only
  /// WarpPerRow and BlockPerRow take them, for static shapes.
  std::vector<ir::Stage*> element_outputs;
};

/// The consumer's elements over blocks of 256 threads; each reduction computed by each thread
/// for its element, in registers, inside the thread's loop (accumulators, column reductions,
/// short windows).
absl::StatusOr<TacticChoice> ThreadPerElement(ir::Schedule& sch, const ReductionGroup& g,
                                              const ir::Target& target, std::string why);

/// One block per row of the consumer (its first row_dims dims fused on blockIdx.x, the rest
/// fused and split over threadIdx.x); each reduction is computed inside the row's block loop,
/// its reduce axes over the same threads (a block reduce), its result kept by every thread,
/// the row outputs stored from there. With `lanes` (2 or more), each thread takes `lanes`
/// contiguous elements at a time as one vector (WarpPerRow's).
absl::StatusOr<TacticChoice> BlockPerRow(ir::Schedule& sch, const ReductionGroup& g,
                                         const ir::Target& target, int lanes = 0);

/// One warp per row, `rows_per_block` rows per block (rows on blockIdx.x and threadIdx.y, the
/// row's columns and reduce axes over the warp's lanes on threadIdx.x): short rows reduce by
/// shuffles within the warp, with no block-wide barrier per reduction. The consumer's row
/// count must be a static multiple of rows_per_block, or symbolic: then the last block's rows
/// past the end are guarded, warp by warp. Each lane keeps its row's reductions in registers:
/// no shared memory, no barrier. With `lanes` (2 or more), a warp lane takes `lanes`
/// contiguous elements of the row at a time as one vector, in the reductions too (each lane's
/// vector combined into its partial: vector_reduce); rows of symbolic length, whose
/// thread-local arrays could not be sized, read 16 bytes per lane so. The row outputs are
/// stored by the row's lanes.
absl::StatusOr<TacticChoice> WarpPerRow(ir::Schedule& sch, const ReductionGroup& g,
                                        const ir::Target& target, int rows_per_block, int lanes,
                                        std::string why);

}  // namespace cinn_like::hlir
