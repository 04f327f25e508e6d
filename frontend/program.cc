/// \file Program to Graph.
#include "frontend/program.h"

#include "absl/strings/str_cat.h"

namespace cinn_like::frontend {

absl::StatusOr<hlir::Graph> BuildGraph(const Program& program) {
  hlir::Graph graph;
  for (const InputDecl& in : program.inputs) {
    auto id = graph.AddInput(in.name, in.desc);
    if (!id.ok()) return id.status();
  }
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const Instruction& inst = program.instructions[i];
    std::vector<int> inputs;
    for (const std::string& name : inst.inputs) {
      auto id = graph.Find(name);
      if (!id.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "instruction ", i, " (", inst.op, "): input '", name, "' is not defined before it"));
      }
      inputs.push_back(*id);
    }
    auto outs = graph.AddNode(inst.op, inputs, inst.attrs, inst.outputs);
    if (!outs.ok()) {
      return absl::Status(outs.status().code(),
                          absl::StrCat("instruction ", i, ": ", outs.status().message()));
    }
  }
  for (const std::string& name : program.outputs) {
    auto id = graph.Find(name);
    if (!id.ok()) return absl::InvalidArgumentError("output '" + name + "' is not defined");
    absl::Status s = graph.MarkOutput(*id);
    if (!s.ok()) return s;
  }
  if (program.outputs.empty()) return absl::InvalidArgumentError("the program has no outputs");
  return graph;
}

}  // namespace cinn_like::frontend
