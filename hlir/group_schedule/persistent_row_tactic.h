/// \file The GPU tactic for a row reduction group whose stages read the same inputs again
/// (softmax's max, sum and quotient; layer_norm's mean, variance and normalization): each
/// row is read from memory once into its threads' registers ("persistent" rows, as
/// Inductor's persistent reductions and CINN's register-resident rows do).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/group_schedule/reduction_tactics.h"
#include "hlir/group_schedule/tactic.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

struct PersistentRowPlan {
  int threads = 0;                 // a row's threads, on threadIdx.x (a power of two, >= a warp)
  int per_thread = 0;              // contiguous elements of a row each thread holds
  int rows_per_block = 1;          // rows of a block, on threadIdx.y
  int vector_bytes = 16;           // the widest access of the device
  std::vector<ir::Tensor> inputs;  // read from memory once per row into registers
  std::vector<ir::Tensor> intermediates;  // inlined stages computed once per row instead
  std::string why;
  std::optional<TuningKnob> knob;  // row_bytes_per_thread: the shares worth timing
  /// A row of symbolic length held to a bound (a bucket's lowering): that length, which the
  /// plan pads to threads * per_thread elements (guarded); undefined for a static row.
  ir::Expr padded_length;
};

/// The plan for `g` on `target`, or nullopt when the group does not fit: a static reduce
/// extent equal to the consumer's row, every reduction along the contiguous axis, at least one
/// input or inlined elementwise stage read by two or more of the group's stages (along the
/// row, affinely), and a row that splits into a power-of-two count of threads (a warp to a
/// block) holding at most kMaxBytesPerThread of them. A thread's share is 32 bytes of the widest
/// input, or `requested_bytes` (8, 16 or 64, the tuner's) where that fits too. With
/// `symbolic_bound` > 0 (a bucket's lowering), a row of symbolic length (one reduce axis, the
/// consumer's last dim) is planned as a row of `symbolic_bound` elements, its tail guarded.
std::optional<PersistentRowPlan> PlanPersistentRow(const ir::Schedule& sch, const ReductionGroup& g,
                                                   const ir::Target& target,
                                                   int requested_bytes = 0,
                                                   int64_t symbolic_bound = 0);

/// Schedules `g` by `plan`: rows on blockIdx.x (and threadIdx.y), a row's columns in blocks
/// of `per_thread` contiguous elements per thread on threadIdx.x, each cached input read once
/// per row into a thread-local array (vector loads), the reductions and the consumer reading
/// it from there (unrolled, so the array stays in registers), the consumer's stores vectors.
absl::StatusOr<TacticChoice> PersistentRow(ir::Schedule& sch, const ReductionGroup& g,
                                           const PersistentRowPlan& plan);

}  // namespace cinn_like::hlir
