/// \file The dump's text of the tactics chosen.
#include "hlir/group_schedule/tactic.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cinn_like::hlir {

std::optional<TuningKnob> MakeKnob(std::string name, const std::vector<int>& options,
                                   int requested) {
  TuningKnob knob{std::move(name), {}, 0};
  for (int o : options) {
    if (std::find(knob.options.begin(), knob.options.end(), o) == knob.options.end()) {
      knob.options.push_back(o);
    }
  }
  if (knob.options.size() < 2) return std::nullopt;
  const bool known =
      std::find(knob.options.begin(), knob.options.end(), requested) != knob.options.end();
  knob.value = known ? requested : knob.options[0];
  return knob;
}

std::string TacticsText(const std::vector<TacticChoice>& choices) {
  std::string out;
  for (const TacticChoice& c : choices) {
    absl::StrAppend(&out, c.stage, ": ", c.tactic, " (", c.why, ")");
    if (c.knob) {
      absl::StrAppend(&out, " [", c.knob->name, " ", c.knob->value, " of ",
                      absl::StrJoin(c.knob->options, "/"), "]");
    }
    out += "\n";
  }
  return out;
}

}  // namespace cinn_like::hlir
