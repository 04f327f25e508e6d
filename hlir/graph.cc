/// \file Building a Graph, with inference at every node.
#include "hlir/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"

namespace cinn_like::hlir {

absl::StatusOr<int> Graph::AddInput(const std::string& name, const TensorDesc& desc) {
  if (name.empty() || by_name_.count(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input name '", name, "' is empty or already used"));
  }
  absl::Status size = CheckTensorSize(desc, "input " + name);
  if (!size.ok()) return size;
  int id = static_cast<int>(values_.size());
  values_.push_back(Value{name, desc, -1});
  by_name_[name] = id;
  inputs_.push_back(id);
  return id;
}

absl::StatusOr<std::vector<int>> Graph::AddNode(const std::string& op,
                                                const std::vector<int>& inputs,
                                                const AttributeMap& attrs,
                                                const std::vector<std::string>& output_names) {
  std::vector<TensorDesc> descs;
  for (int v : inputs) {
    if (v < 0 || v >= static_cast<int>(values_.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("op ", op, ": input value id ", v, " does not exist"));
    }
    descs.push_back(values_[v].desc);
  }
  auto out = OpRegistry::Global().Infer(op, descs, attrs);
  if (!out.ok()) return out.status();
  std::vector<std::string> names = output_names;
  for (size_t k = 0; output_names.empty() && k < out->size(); ++k) {
    std::string fresh;
    do {
      fresh = absl::StrCat(op, "_", fresh_counter_++);
    } while (by_name_.count(fresh));
    names.push_back(fresh);
  }
  if (out->size() != names.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": has ", out->size(), " outputs, ", names.size(), " names given"));
  }
  for (auto& name : names) {
    if (name.empty() || by_name_.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("op ", op, ": output name '", name, "' is empty or already used"));
    }
  }
  Node node{op, inputs, {}, attrs};
  int node_id = static_cast<int>(nodes_.size());
  for (size_t i = 0; i < out->size(); ++i) {
    int id = static_cast<int>(values_.size());
    values_.push_back(Value{names[i], (*out)[i], node_id});
    by_name_[names[i]] = id;
    node.outputs.push_back(id);
  }
  nodes_.push_back(std::move(node));
  return nodes_.back().outputs;
}

absl::Status Graph::MarkOutput(int value) {
  if (value < 0 || value >= static_cast<int>(values_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("output value id ", value, " does not exist"));
  }
  if (std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end()) {
    return absl::InvalidArgumentError("value " + values_[value].name +
                                      " is marked as an output twice");
  }
  outputs_.push_back(value);
  return absl::OkStatus();
}

absl::StatusOr<int> Graph::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end())
    return absl::NotFoundError("no value named '" + name + "' in the graph");
  return it->second;
}

}  // namespace cinn_like::hlir
