/// \file The group report: where a compiled Program's time goes, group by group, without any
/// other framework. Each fusion group is compiled alone (hlir::GroupGraph), timed on the device
/// on random inputs (group_timing.h) and listed by time with its ops and its stages' tactics.
/// Written as <name>.groups.txt into the dump directory by a built compile a caller asked for
/// (LowerAndBuild's `group_report`) while cinn_like_dump_dir is set (and cinn_like_group_report,
/// on by default).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hlir/group_schedule/tactic.h"
#include "hlir/pass/fusion.h"
#include "ir/target.h"

namespace cinn_like {

/// One group's line of the report.
struct GroupTime {
  int group = -1;
  double us = -1;      // microseconds per call, the group alone; negative when not timed
  std::string why;     // why not timed (CanTimeAlone's reason, or a failure)
  std::string ops;     // its ops, "conv2d" or "reduce_mean, sub, mul (+3)"
  std::string tactic;  // the tactics of what was timed ("; "-separated, with knob values)
};

/// Each group of `fused` timed alone on `target`, compiled with the knob values the compile
/// used (`knob_values`, by group: the tuner's, cinn_like/tune/autotune.h), in the groups' order
/// (`tactics`: the choices the compile made, hlir::CompileFusedGraph's). Groups that cannot be
/// timed alone (CanTimeAlone) are listed with the reason (`why`); nothing here fails the caller.
std::vector<GroupTime> TimeGroups(const hlir::FusedGraph& fused,
                                  const std::vector<hlir::TacticChoice>& tactics,
                                  const std::map<int, int>& knob_values, const ir::Target& target,
                                  const std::string& name);

/// The report's text: a header (the function, the target, how groups were timed, the total),
/// the timed groups slowest first (microseconds, share of the total, group, ops, tactics), then
/// those not timed with the reason.
std::string GroupReportText(const std::vector<GroupTime>& times, const std::string& name,
                            const ir::Target& target);

/// Whether a built compile writes the report: dumping is on and the flag cinn_like_group_report
/// is set.
bool GroupReportIsOn();

/// Times the groups and writes GroupReportText to <name>.groups.txt in the dump directory (the
/// caller checked GroupReportIsOn, and collected `tactics` because it holds).
void WriteGroupReport(const hlir::FusedGraph& fused, const std::vector<hlir::TacticChoice>& tactics,
                      const std::map<int, int>& knob_values, const ir::Target& target,
                      const std::string& name);

}  // namespace cinn_like
