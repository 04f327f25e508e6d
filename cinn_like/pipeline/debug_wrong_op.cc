/// \file PlantWrongResults: a Program rewrite, so the whole compiler runs on the planted op.
#include "cinn_like/pipeline/debug_wrong_op.h"

#include <set>

#include "absl/algorithm/container.h"
#include "absl/strings/str_split.h"

namespace cinn_like {

absl::StatusOr<hlir::Graph> PlantWrongResults(const frontend::Program& program,
                                              const hlir::Graph& graph, const std::string& ops) {
  const std::vector<std::string> wrong = absl::StrSplit(ops, ',');
  std::set<std::string> names;
  for (const frontend::InputDecl& in : program.inputs) names.insert(in.name);
  for (const frontend::Instruction& ins : program.instructions) {
    names.insert(ins.outputs.begin(), ins.outputs.end());
  }
  frontend::Program planted = program;
  planted.instructions.clear();
  for (const frontend::Instruction& ins : program.instructions) {
    planted.instructions.push_back(ins);
    if (!absl::c_linear_search(wrong, ins.op)) continue;
    frontend::Instruction& copy = planted.instructions.back();
    std::vector<frontend::Instruction> negations;
    for (std::string& out : copy.outputs) {
      auto value = graph.Find(out);
      if (!value.ok()) return value.status();  // BuildGraph accepted `program`: a bug
      std::string right = out + "_right";
      while (names.count(right)) right += "_";
      names.insert(right);
      const bool is_bool = graph.values()[*value].desc.dtype == hlir::DType::kBool;
      negations.push_back({is_bool ? "logical_not" : "neg", {right}, {out}, {}});
      out = right;
    }
    planted.instructions.insert(planted.instructions.end(), negations.begin(), negations.end());
  }
  return frontend::BuildGraph(planted);
}

}  // namespace cinn_like
