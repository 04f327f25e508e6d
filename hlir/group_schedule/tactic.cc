/// \file The dump's text of the tactics chosen.
#include "hlir/group_schedule/tactic.h"

#include "absl/strings/str_cat.h"

namespace cinn_like::hlir {

std::string TacticsText(const std::vector<TacticChoice>& choices) {
  std::string out;
  for (const TacticChoice& c : choices)
    absl::StrAppend(&out, c.stage, ": ", c.tactic, " (", c.why, ")\n");
  return out;
}

}  // namespace cinn_like::hlir
