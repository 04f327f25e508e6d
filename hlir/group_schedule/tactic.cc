/// \file The dump's text of the tactics chosen.
#include "hlir/group_schedule/tactic.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cinn_like::hlir {

int ChooseKnob(std::optional<TuningKnob>* knob, std::string name, const std::vector<int>& options,
               int requested) {
  TuningKnob k{std::move(name), {}, 0};
  for (int o : options) {
    if (std::find(k.options.begin(), k.options.end(), o) == k.options.end()) k.options.push_back(o);
  }
  const bool known = std::find(k.options.begin(), k.options.end(), requested) != k.options.end();
  k.value = known ? requested : k.options[0];
  const int value = k.value;
  if (k.options.size() >= 2) {
    *knob = std::move(k);
  } else {
    knob->reset();
  }
  return value;
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
