/// \file NetBuilder: each op is checked as it is added, through the graph it keeps in step.
#include "frontend/net_builder.h"

#include "absl/strings/str_cat.h"

namespace cinn_like::frontend {

Var NetBuilder::CreateInput(hlir::DType dtype, const hlir::Shape& shape, const std::string& name) {
  if (!status_.ok()) return Var{};
  std::string n = name.empty() ? absl::StrCat("input_", graph_.inputs().size()) : name;
  hlir::TensorDesc desc{dtype, shape};
  auto id = graph_.AddInput(n, desc);
  if (!id.ok()) {
    status_ = id.status();
    return Var{};
  }
  program_.inputs.push_back(InputDecl{n, desc});
  return Var{n, desc};
}

std::vector<Var> NetBuilder::Op(const std::string& op, const std::vector<Var>& inputs,
                                const hlir::AttributeMap& attrs) {
  if (!status_.ok()) return {};
  std::vector<int> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto id = inputs[i].valid() ? graph_.Find(inputs[i].name)
                                : absl::StatusOr<int>(absl::NotFoundError("an invalid Var"));
    if (!id.ok()) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat("op ", op, ": input ", i, " ", id.status().message()));
      return {};
    }
    ids.push_back(*id);
  }
  auto added = graph_.AddNode(op, ids, attrs, {});  // fresh output names
  if (!added.ok()) {
    status_ = added.status();
    return {};
  }
  std::vector<std::string> names;
  std::vector<Var> result;
  for (int id : *added) {
    names.push_back(graph_.values()[id].name);
    result.push_back(Var{names.back(), graph_.values()[id].desc});
  }
  Instruction inst{op, {}, names, attrs};
  for (auto& v : inputs) inst.inputs.push_back(v.name);
  program_.instructions.push_back(std::move(inst));
  return result;
}

Var NetBuilder::One(const std::string& op, const std::vector<Var>& inputs,
                    const hlir::AttributeMap& attrs) {
  std::vector<Var> out = Op(op, inputs, attrs);
  return out.empty() ? Var{} : out[0];
}

void NetBuilder::MarkOutput(const Var& v) {
  if (!status_.ok()) return;
  auto id =
      v.valid() ? graph_.Find(v.name) : absl::StatusOr<int>(absl::NotFoundError("invalid Var"));
  absl::Status s = id.ok() ? graph_.MarkOutput(*id) : id.status();
  if (!s.ok()) {
    status_ = absl::InvalidArgumentError("MarkOutput: " + std::string(s.message()));
    return;
  }
  program_.outputs.push_back(v.name);
}

absl::StatusOr<Program> NetBuilder::Build() const {
  if (!status_.ok()) return status_;
  if (program_.outputs.empty())
    return absl::InvalidArgumentError("the program has no outputs; call MarkOutput");
  return program_;
}

}  // namespace cinn_like::frontend
