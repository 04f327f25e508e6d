/// \file The opt-in tuner (flag cinn_like_autotune): where a fusion group's tactic leaves a knob
/// (hlir::TuningKnob: bytes per access, a row's bytes per thread, rows per block, vector
/// widths), each of its values is compiled and timed on the device, the group alone
/// (hlir::GroupGraph) on random inputs, and the fastest is kept. Choices are remembered by the
/// group's structure (hlir::StructuralKey), the target and the device's size, in this process
/// and, with the flag cinn_like_autotune_cache, in a JSON file: a group is timed once, and the
/// same file gives the same schedules (nothing is timed for a choice found there).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/group_schedule/tactic.h"
#include "hlir/pass/fusion.h"
#include "ir/target.h"

namespace cinn_like {

/// What the tuner has done in this process.
struct TuningStats {
  int64_t groups_timed = 0;       // groups whose knob values were compiled and timed
  int64_t groups_remembered = 0;  // groups whose choice was known (this process or the file)
  int64_t trials = 0;             // (group, value) pairs compiled and timed
};
TuningStats GetTuningStats();

/// Forgets the choices held in this process (the next tuned compile reads the file again).
void ForgetTuning();

/// The knob values, by group, of the groups of `fused` whose tuned value differs from their
/// tactic's own (`tactics`: those of `fused` compiled for `target` with the tactics' own
/// values, hlir::CompileFusedGraph's): remembered, else the fastest when timed; empty when
/// every tactic's own value is the best. A value that fails to compile or run is skipped
/// (logged); a group whose every value fails, or whose shapes are symbolic, keeps its
/// tactic's own. `name` names the timed functions in the dump (`<name>_tune_g<group>_<value>`)
/// and the timings (`<name>.autotune.txt`).
absl::StatusOr<std::map<int, int>> TuneGroups(const hlir::FusedGraph& fused,
                                              const std::vector<hlir::TacticChoice>& tactics,
                                              const ir::Target& target, const std::string& name);

}  // namespace cinn_like
