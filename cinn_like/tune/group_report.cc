/// \file TimeGroups, GroupReportText and WriteGroupReport: each group of a compile timed alone.
#include "cinn_like/tune/group_report.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cinn_like/tune/group_timing.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/group_graph.h"
#include "ir/flags.h"

namespace cinn_like {
namespace {

/// At most this many of a group's ops are named on its line.
constexpr size_t kOpsNamed = 6;

std::string OpsText(const hlir::FusedGraph& fused, const hlir::FusionGroup& group) {
  std::string text;
  for (size_t k = 0; k < group.nodes.size() && k < kOpsNamed; ++k) {
    absl::StrAppend(&text, k ? ", " : "", fused.graph.nodes()[group.nodes[k]].op);
  }
  if (group.nodes.size() > kOpsNamed) {
    absl::StrAppend(&text, " (+", group.nodes.size() - kOpsNamed, ")");
  }
  return text;
}

/// The tactics of group `group` among `tactics`, "; "-separated, each with its knob's value.
std::string TacticText(const std::vector<hlir::TacticChoice>& tactics, int group) {
  std::string text;
  for (const hlir::TacticChoice& c : tactics) {
    if (c.group != group) continue;
    absl::StrAppend(&text, text.empty() ? "" : "; ", c.stage, ": ", c.tactic);
    if (c.knob) absl::StrAppend(&text, " [", c.knob->name, " ", c.knob->value, "]");
  }
  return text;
}

/// Microseconds per call of group `g` of `fused` compiled alone with its knob value (where
/// `knob_values` has one), or why it was not timed; `*tactic` gets the tactics of what was
/// timed.
absl::StatusOr<double> TimeOne(const hlir::FusedGraph& fused, int g,
                               const std::map<int, int>& knob_values, const ir::Target& target,
                               const std::string& name, std::string* tactic) {
  auto one = hlir::GroupGraph(fused, g);
  if (!one.ok()) return one.status();
  if (absl::Status can = CanTimeAlone(*one); !can.ok()) return can;
  const std::string fname = absl::StrCat(name, "_group", g);
  std::map<int, int> knob;  // the group alone is group 0
  if (auto it = knob_values.find(g); it != knob_values.end()) knob[0] = it->second;
  std::vector<hlir::TacticChoice> tactics;
  auto module = hlir::CompileFusedGraph(*one, target, fname, knob, &tactics);
  if (!module.ok()) return module.status();
  *tactic = TacticText(tactics, 0);
  auto built = BuildFunction(*module, target, fname);
  if (!built.ok()) return built.status();
  auto placed = PlaceGroupArgs(one->graph, target);
  if (!placed.ok()) return placed.status();
  auto seconds = SecondsPerCall(*built, target, placed->args);
  if (!seconds.ok()) return seconds.status();
  return *seconds * 1e6;
}

}  // namespace

std::vector<GroupTime> TimeGroups(const hlir::FusedGraph& fused,
                                  const std::vector<hlir::TacticChoice>& tactics,
                                  const std::map<int, int>& knob_values, const ir::Target& target,
                                  const std::string& name) {
  std::vector<GroupTime> out;
  DumpOffScope quiet;  // the groups' own compiles dump nothing beside the report
  for (size_t g = 0; g < fused.groups.size(); ++g) {
    GroupTime t;
    t.group = static_cast<int>(g);
    t.ops = OpsText(fused, fused.groups[g]);
    t.tactic = TacticText(tactics, t.group);
    // The compile's own tactics where the group is not timed, else those of what was timed.
    absl::StatusOr<double> us = TimeOne(fused, t.group, knob_values, target, name, &t.tactic);
    if (us.ok()) {
      t.us = *us;
    } else {
      t.why = std::string(us.status().message());
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string GroupReportText(const std::vector<GroupTime>& times, const std::string& name,
                            const ir::Target& target) {
  std::vector<const GroupTime*> timed, untimed;
  double total = 0;
  for (const GroupTime& t : times) {
    (t.us >= 0 ? timed : untimed).push_back(&t);
    if (t.us >= 0) total += t.us;
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const GroupTime* a, const GroupTime* b) { return a->us > b->us; });
  std::string text = absl::StrCat(
      "# ", name, " on ", target.ToString(), ": each fusion group compiled alone and timed on ",
      "random inputs (best of 3 batches of about 2 ms, after warm-up calls; a group alone ",
      "reads its inputs from memory, as it does in the whole function)\n",
      absl::StrFormat("# %d groups, %d timed: %.2f us in all\n", times.size(), timed.size(), total),
      "#       us  share  group  ops | tactics (the tactics file says why)\n");
  for (const GroupTime* t : timed) {
    absl::StrAppend(&text, absl::StrFormat("%10.2f %5.1f%% %6d  %s | %s\n", t->us,
                                           total > 0 ? 100 * t->us / total : 0.0, t->group, t->ops,
                                           t->tactic.empty() ? "-" : t->tactic));
  }
  if (!untimed.empty()) absl::StrAppend(&text, "# not timed\n");
  for (const GroupTime* t : untimed) {
    absl::StrAppend(&text,
                    absl::StrFormat("%10s %6s %6d  %s | %s\n", "-", "", t->group, t->ops, t->why));
  }
  return text;
}

bool GroupReportIsOn() { return FLAGS_cinn_like_group_report && !DumpDir().empty(); }

void WriteGroupReport(const hlir::FusedGraph& fused, const std::vector<hlir::TacticChoice>& tactics,
                      const std::map<int, int>& knob_values, const ir::Target& target,
                      const std::string& name) {
  std::vector<GroupTime> times = TimeGroups(fused, tactics, knob_values, target, name);
  DumpToFile(name + ".groups.txt", GroupReportText(times, name, target));
}

}  // namespace cinn_like
