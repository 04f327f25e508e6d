/// \file The x86 tactic for a fusion group whose row reductions feed one consumer (softmax,
/// layer_norm, rms_norm): one pass over memory per row.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/group_schedule/reduction_tactics.h"
#include "hlir/group_schedule/tactic.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

/// The consumer's rows (its first row_dims dims, fused) on the thread pool, its columns
/// vectorized where their extent is a static multiple of the lanes; each reduction computed
/// inside the row's iteration into a one-element local buffer, its contiguous reduce loop in
/// vector accumulators. A row is read while it is in cache, once per reduction and once by
/// the consumer, instead of one sweep over the whole tensor per reduction.
absl::StatusOr<TacticChoice> CpuRowGroup(ir::Schedule& sch, const ReductionGroup& g,
                                         const ir::Target& target);

}  // namespace cinn_like::hlir
