/// \file SelfCheck: random inputs, the reference, the compiled run and its comparison, the
/// narrowing to the first differing instruction.
#include "cinn_like/verify/self_check.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cinn_like/verify/first_difference.h"
#include "hlir/reference_interpreter.h"
#include "ir/target.h"

namespace cinn_like {

absl::StatusOr<SelfCheckReport> SelfCheck(const frontend::Program& program,
                                          const SelfCheckOptions& options) {
  auto graph = frontend::BuildGraph(program);
  if (!graph.ok()) return graph.status();
  std::vector<hlir::HostTensor> inputs = RandomInputs(*graph, options);
  auto want = hlir::RunReference(*graph, inputs);
  if (!want.ok()) {
    return absl::Status(want.status().code(),
                        absl::StrCat("the reference refuses the random inputs (seed ", options.seed,
                                     "): ", want.status().message()));
  }
  SelfCheckReport report;
  const ir::Target x86 = ir::Target::X86();
  std::string diffs = RunAndCompare(program, x86, inputs, *want, /*stream=*/nullptr);
  report.ok = diffs.empty();
  report.summary = absl::StrCat(
      program.instructions.size(), " instructions, ", program.outputs.size(), " outputs, seed ",
      options.seed, ": ",
      report.ok ? "every output matches the reference\n" : "differs from the reference\n" + diffs);
  if (report.ok || !options.bisect) return report;
  FirstDifference first = FindFirstDifference(program, inputs, x86, /*stream=*/nullptr);
  if (first.instruction < 0) {
    absl::StrAppend(&report.summary, "no prefix differs on its own\n");
    return report;
  }
  report.first_bad_instruction = first.instruction;
  report.smallest = std::move(first.prefix);
  absl::StrAppend(&report.summary, "first differing instruction: ", first.instruction, " (op ",
                  program.instructions[first.instruction].op, ")\n", first.diffs);
  return report;
}

}  // namespace cinn_like
