/// \file RunAndCompare (the pipeline, then CallAndCompare) and the prefixes' search.
#include "cinn_like/verify/first_difference.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cinn_like/compare/call_and_compare.h"
#include "cinn_like/pipeline/lower_and_build.h"
#include "hlir/reference_interpreter.h"

namespace cinn_like {

std::string RunAndCompare(const frontend::Program& program, const ir::Target& target,
                          const std::vector<hlir::HostTensor>& inputs,
                          const std::vector<hlir::HostTensor>& want, void* stream) {
  const std::string name = "self_check";
  auto built = LowerAndBuild(program, target, name, PipelineEnd::kBuilt, nullptr);
  if (!built.ok()) return absl::StrCat("compile failed: ", built.status().message());
  auto fn = built->compiler->Lookup(name);
  if (!fn.ok()) return absl::StrCat("lookup failed: ", fn.status().message());
  return CallAndCompare(*fn, target, inputs, want, program.outputs, stream);
}

FirstDifference FindFirstDifference(const frontend::Program& program,
                                    const std::vector<hlir::HostTensor>& inputs,
                                    const ir::Target& target, void* stream) {
  for (size_t k = 1; k <= program.instructions.size(); ++k) {
    frontend::Program prefix = program;
    prefix.instructions.resize(k);
    prefix.outputs = program.instructions[k - 1].outputs;
    auto graph = frontend::BuildGraph(prefix);
    if (!graph.ok()) continue;
    auto want = hlir::RunReference(*graph, inputs);
    if (!want.ok()) continue;
    std::string diffs = RunAndCompare(prefix, target, inputs, *want, stream);
    if (diffs.empty()) continue;
    return FirstDifference{static_cast<int>(k - 1), std::move(prefix), std::move(diffs)};
  }
  return FirstDifference{};
}

}  // namespace cinn_like
