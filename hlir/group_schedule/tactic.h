/// \file What a tactic chose for one kernel (or CPU loop nest), for the dump: the tactic's
/// name and why, in a line a person can read (`<entry>.tactics.txt` in cinn_like_dump_dir).
#pragma once

#include <string>
#include <vector>

namespace cinn_like::hlir {

struct TacticChoice {
  std::string stage;   // the tensor whose loop nest the tactic scheduled
  std::string tactic;  // "elementwise.vector", "row_reduction.warp_per_row", ...
  std::string why;     // the facts that chose it: shapes, dtypes, device properties
};

/// One line per choice: "<stage>: <tactic> (<why>)".
std::string TacticsText(const std::vector<TacticChoice>& choices);

}  // namespace cinn_like::hlir
