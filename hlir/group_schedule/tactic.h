/// \file What a tactic chose for one kernel (or CPU loop nest), for the dump: the tactic's
/// name and why, in a line a person can read (`<entry>.tactics.txt` in cinn_like_dump_dir).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cinn_like::hlir {

/// A schedule parameter a tactic leaves to the tuner (cinn_like_autotune,
/// cinn_like/tune/autotune.h): the values worth timing for this kernel, its default first, and
/// the value the schedule used.
struct TuningKnob {
  std::string name;          // "vector_bytes", "row_bytes_per_thread", ...
  std::vector<int> options;  // two or more, distinct; options[0] is the tactic's own choice
  int value = 0;             // one of options
};

struct TacticChoice {
  std::string stage;               // the tensor whose loop nest the tactic scheduled
  std::string tactic;              // "elementwise.vector", "row_reduction.warp_per_row", ...
  std::string why;                 // the facts that chose it: shapes, dtypes, device properties
  int group = -1;                  // the fusion group of the stage (-1: lowered without groups)
  std::optional<TuningKnob> knob;  // what the tuner may choose for it, when anything
};

/// The value a tactic schedules with for its knob `name` over `options` (its own choice
/// first; duplicates dropped): `requested` when it is one of them, else options[0]. Sets
/// `*knob` to that knob, or to nullopt with fewer than two options (nothing to choose).
/// `options` must not be empty.
int ChooseKnob(std::optional<TuningKnob>* knob, std::string name, const std::vector<int>& options,
               int requested);

/// One line per choice: "<stage>: <tactic> (<why>)", then " [<knob> <value> of a/b/c]" where
/// the tactic has a knob.
std::string TacticsText(const std::vector<TacticChoice>& choices);

}  // namespace cinn_like::hlir
