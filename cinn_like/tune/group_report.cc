/// \file TimeGroups, GroupReportText and WriteGroupReport: each group of a compile timed alone.
#include "cinn_like/tune/group_report.h"

#include <glog/logging.h>

#include <algorithm>

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

std::string TacticText(const std::vector<hlir::TacticChoice>& tactics, int group) {
  std::string text;
  for (const hlir::TacticChoice& c : tactics) {
    if (c.group != group) continue;
    absl::StrAppend(&text, text.empty() ? "" : "; ", c.stage, ": ", c.tactic);
  }
  return text;
}

bool HasSymbolicDims(const hlir::Graph& g) {
  return std::any_of(g.values().begin(), g.values().end(),
                     [](const hlir::Value& v) { return !hlir::IsStatic(v.desc.shape); });
}

/// Milliseconds per call of group `g` of `fused` compiled alone, or why it was not timed.
absl::StatusOr<double> TimeOne(const hlir::FusedGraph& fused, int g, const ir::Target& target,
                               const std::string& name) {
  auto one = hlir::GroupGraph(fused, g);
  if (!one.ok()) return one.status();
  if (one->graph.outputs().empty()) {
    return absl::FailedPreconditionError("no stored value (computed inside its readers)");
  }
  if (HasSymbolicDims(one->graph)) {
    return absl::FailedPreconditionError("symbolic shapes (no size to time it at)");
  }
  const std::string fname = absl::StrCat(name, "_group", g);
  auto module = hlir::CompileFusedGraph(*one, target, fname, {});
  if (!module.ok()) return module.status();
  auto placed = PlaceGroupArgs(one->graph, target);
  if (!placed.ok()) return placed.status();
  auto seconds = SecondsPerCall(*module, target, fname, placed->args);
  if (!seconds.ok()) return seconds.status();
  return *seconds * 1e3;
}

}  // namespace

std::vector<GroupTime> TimeGroups(const hlir::FusedGraph& fused,
                                  const std::vector<hlir::TacticChoice>& tactics,
                                  const ir::Target& target, const std::string& name) {
  std::vector<GroupTime> out;
  DumpOffScope quiet;  // the groups' own compiles dump nothing beside the report
  for (size_t g = 0; g < fused.groups.size(); ++g) {
    GroupTime t;
    t.group = static_cast<int>(g);
    t.ops = OpsText(fused, fused.groups[g]);
    t.tactic = TacticText(tactics, t.group);
    absl::StatusOr<double> ms = TimeOne(fused, t.group, target, name);
    if (ms.ok()) {
      t.ms = *ms;
    } else {
      t.why = std::string(ms.status().message());
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
    (t.ms >= 0 ? timed : untimed).push_back(&t);
    if (t.ms >= 0) total += t.ms;
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const GroupTime* a, const GroupTime* b) { return a->ms > b->ms; });
  std::string text = absl::StrCat(
      "# ", name, " on ", target.ToString(), ": each fusion group compiled alone and timed on ",
      "random inputs (best of 3 batches of about 2 ms, after warm-up calls; a group alone ",
      "reads its inputs from memory, as it does in the whole function)\n",
      absl::StrFormat("# %d groups, %d timed: %.4f ms in all\n", times.size(), timed.size(), total),
      "#       ms  share  group  ops | tactics (the tactics file says why)\n");
  for (const GroupTime* t : timed) {
    absl::StrAppend(&text, absl::StrFormat("%10.4f %5.1f%% %6d  %s | %s\n", t->ms,
                                           total > 0 ? 100 * t->ms / total : 0.0, t->group, t->ops,
                                           t->tactic.empty() ? "-" : t->tactic));
  }
  if (!untimed.empty()) absl::StrAppend(&text, "# not timed\n");
  for (const GroupTime* t : untimed) {
    absl::StrAppend(&text,
                    absl::StrFormat("%10s %6s %6d  %s | %s\n", "-", "", t->group, t->ops, t->why));
  }
  return text;
}

void WriteGroupReport(const hlir::FusedGraph& fused, const std::vector<hlir::TacticChoice>& tactics,
                      const ir::Target& target, const std::string& name) {
  if (!FLAGS_cinn_like_group_report || DumpDir().empty()) return;
  std::vector<GroupTime> times = TimeGroups(fused, tactics, target, name);
  DumpToFile(name + ".groups.txt", GroupReportText(times, name, target));
}

}  // namespace cinn_like
