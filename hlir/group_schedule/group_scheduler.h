/// \file The group scheduler: all scheduling policy for the stages of one lowered function
/// (the fusion groups of a subgraph, or nodes lowered without groups), per target. The graph
/// compiler builds the computes, says what each tensor is (StageInfo) and which must be stored
/// (outputs, values read across groups), and asks ScheduleGroups; it never schedules itself.
///
/// Policy, in order:
///  - inlining: constants and one-element non-reductions are inlined into their readers
///    unless they are outputs; on GPUs a group's other non-reductions too, while the inlined
///    element stays within the node budget (hlir/inline_size.h); past it a stage is a kernel
///    writing a device temporary. On CPUs every stored intermediate is a loop nest of its own.
///  - GPU groups with reductions: computed inside the kernel of the group's one materialized
///    consumer when every reduction keeps a leading prefix of that consumer's dims
///    (reduction_tactics.h): by each thread for its element (matmul/conv accumulators, column
///    reductions, at most 32 elements), else a block per row; the group's stored one-element-per-
///    row stages that consumer reads (row outputs) are stored from inside its rows. Otherwise a
///    reduction is a kernel of its own.
///  - every other stored stage: stage_tactics.h (elementwise, reductions, matmul tiles, CPU).
/// Each kernel's (or CPU nest's) tactic and why is returned for the dump, with its group and
/// the knob the tuner may set.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/group_schedule/tactic.h"
#include "hlir/op.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

/// What the graph compiler knows of each tensor a node's compute made.
struct StageInfo {
  OpPattern pattern = OpPattern::kElementwise;
  int group = -1;                   // the fusion group of the node that made it (-1: no groups)
  bool compile_time_value = false;  // OpDef::compile_time_value: always inlined
};

struct GroupScheduleInput {
  std::map<const ir::TensorNode*, StageInfo> info;  // tensors not listed: the defaults
  std::set<const ir::TensorNode*> keep;             // stored: outputs, values read across groups
  std::set<const ir::TensorNode*> outputs;
  /// By fusion group, the value its tactics' knobs take (TacticChoice::knob: the tuner's
  /// choice, cinn_like/tune/autotune.h); a group not listed, or a value not among a knob's
  /// options, gets the tactic's own.
  std::map<int, int> knob_values;
  /// A bucket's lowering (hlir/row_buckets.h): each row reduction whose rows have a symbolic
  /// length is scheduled as if that length were at most this (0: no bucket), so the
  /// persistent-row tactic can hold such a row in registers, padded to the bound and guarded,
  /// and other rows take a warp. Each such row length is added to `*padded_rows` (in a
  /// bucket's lowering the host entry runs its kernels only where every one is at most the
  /// bound; in the generic lowering they say whether buckets are worth lowering at all).
  int64_t symbolic_row_bound = 0;
  std::vector<ir::Expr>* padded_rows = nullptr;
};

/// Schedules every stage of `sch` for `target`; errors name the stage at fault.
absl::StatusOr<std::vector<TacticChoice>> ScheduleGroups(ir::Schedule& sch,
                                                         const GroupScheduleInput& input,
                                                         const ir::Target& target);

}  // namespace cinn_like::hlir
