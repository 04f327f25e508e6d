/// \file GraphRewriter: rebuilding a graph node by node through a value map.
#include "hlir/pass/graph_rewriter.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"

namespace cinn_like::hlir {

GraphRewriter::GraphRewriter(const Graph& old) : old_(old), map_(old.values().size(), -1) {
  for (int v : old.inputs()) {
    auto id = new_.AddInput(old.values()[v].name, old.values()[v].desc);
    CHECK(id.ok()) << id.status();  // the old graph's input names are unique
    map_[v] = *id;
  }
}

void GraphRewriter::SetMap(int old_value, int new_value) {
  CHECK(old_.values()[old_value].desc == new_.values()[new_value].desc)
      << "a graph pass changed the type of " << old_.values()[old_value].name << " from "
      << old_.values()[old_value].desc.ToString() << " to "
      << new_.values()[new_value].desc.ToString();
  map_[old_value] = new_value;
}

absl::Status GraphRewriter::CopyNode(int node) {
  const Node& n = old_.nodes()[node];
  std::vector<int> inputs;
  for (int v : n.inputs) {
    CHECK_GE(map_[v], 0) << "input " << old_.values()[v].name << " of node " << node << " (" << n.op
                         << ") has no replacement";
    inputs.push_back(map_[v]);
  }
  std::vector<std::string> names;
  for (int v : n.outputs) names.push_back(old_.values()[v].name);
  auto outs = new_.AddNode(n.op, inputs, n.attrs, names);
  if (!outs.ok()) return outs.status();
  for (size_t i = 0; i < outs->size(); ++i) SetMap(n.outputs[i], (*outs)[i]);
  return absl::OkStatus();
}

std::string GraphRewriter::FreshName(const std::string& hint) {
  std::string name;
  do {
    name = absl::StrCat(hint, "_", fresh_++);
  } while (old_.Find(name).ok() || new_.Find(name).ok());
  return name;
}

absl::StatusOr<std::vector<int>> GraphRewriter::AddNode(
    const std::string& op, const std::vector<int>& inputs, const AttributeMap& attrs,
    const std::string& hint, const std::vector<std::string>& output_names) {
  std::vector<std::string> names = output_names;
  if (names.empty()) {
    auto def = OpRegistry::Global().Find(op);
    if (!def.ok()) return def.status();
    for (int i = 0; i < (*def)->num_outputs; ++i) names.push_back(FreshName(hint));
  }
  return new_.AddNode(op, inputs, attrs, names);
}

absl::StatusOr<Graph> GraphRewriter::Finish() {
  for (int v : old_.outputs()) {
    int mapped = map_[v];
    CHECK_GE(mapped, 0) << "graph output " << old_.values()[v].name << " has no replacement";
    if (new_.values()[mapped].producer < 0 && old_.values()[v].producer >= 0) {
      return absl::InternalError(absl::StrCat("graph output ", old_.values()[v].name,
                                              " was replaced by graph input ",
                                              new_.values()[mapped].name));
    }
    absl::Status s = new_.MarkOutput(mapped);
    if (!s.ok())
      return absl::InternalError("graph output " + old_.values()[v].name + ": " +
                                 std::string(s.message()));
  }
  return std::move(new_);
}

std::vector<std::vector<int>> ValueConsumers(const Graph& graph) {
  std::vector<std::vector<int>> consumers(graph.values().size());
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    for (int v : graph.nodes()[n].inputs) {
      if (consumers[v].empty() || consumers[v].back() != n) consumers[v].push_back(n);
    }
  }
  return consumers;
}

bool IsGraphOutput(const Graph& graph, int v) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

}  // namespace cinn_like::hlir
