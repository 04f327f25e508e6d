/// \file A fusion group as a graph of its own; structural keys.
#include "hlir/pass/group_graph.h"

#include <iterator>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace cinn_like::hlir {

absl::StatusOr<FusedGraph> GroupGraph(const FusedGraph& fused, int group) {
  const Graph& g = fused.graph;
  if (group < 0 || group >= static_cast<int>(fused.groups.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("group graph: no group ", group, " (", fused.groups.size(), " groups)"));
  }
  const std::vector<int>& nodes = fused.groups[group].nodes;
  const std::set<int> in_group(nodes.begin(), nodes.end());
  // Values the group makes that leave it: read by a node of another group, or graph outputs.
  std::set<int> leaving(g.outputs().begin(), g.outputs().end());
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    if (in_group.count(static_cast<int>(n))) continue;
    for (int v : g.nodes()[n].inputs) leaving.insert(v);
  }
  // Rank-0 values made elsewhere (batch_norm's epsilon) cannot be arguments: their producers
  // are copied in, where they are made from nothing (fill, constant). A copied reduction
  // would be computed by another group's kernel, a schedule unlike the group's own.
  std::set<int> all(nodes.begin(), nodes.end());  // ascending ids: topological
  for (int n : nodes) {
    for (int v : g.nodes()[n].inputs) {
      const int p = g.values()[v].producer;
      if (p < 0 || !g.values()[v].desc.shape.empty() || in_group.count(p)) continue;
      if (!g.nodes()[p].inputs.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "group graph: group ", group, " reads the rank-0 value ", g.values()[v].name,
            " that op ", g.nodes()[p].op, " of another group computes"));
      }
      all.insert(p);
    }
  }
  FusedGraph out;
  std::map<int, int> ids;  // value ids of `g` -> of out.graph
  for (int n : all) {
    const Node& node = g.nodes()[n];
    std::vector<int> inputs;
    for (int v : node.inputs) {
      if (!ids.count(v)) {
        auto id = out.graph.AddInput(g.values()[v].name, g.values()[v].desc);
        if (!id.ok()) return id.status();
        ids[v] = *id;
      }
      inputs.push_back(ids[v]);
    }
    std::vector<std::string> names;
    for (int v : node.outputs) names.push_back(g.values()[v].name);
    auto made = out.graph.AddNode(node.op, inputs, node.attrs, names);
    if (!made.ok()) return made.status();
    for (size_t k = 0; k < node.outputs.size(); ++k) ids[node.outputs[k]] = (*made)[k];
  }
  const std::set<int> graph_outputs(g.outputs().begin(), g.outputs().end());
  for (int n : nodes) {
    for (int v : g.nodes()[n].outputs) {
      // A rank-0 value read by another group is copied there (above), not passed.
      const bool copied_there = g.values()[v].desc.shape.empty() && !graph_outputs.count(v);
      if (!leaving.count(v) || copied_there) continue;
      absl::Status st = out.graph.MarkOutput(ids[v]);
      if (!st.ok()) return st;
    }
  }
  FusionGroup one = fused.groups[group];
  one.nodes.clear();
  for (size_t n = 0; n < out.graph.nodes().size(); ++n) one.nodes.push_back(static_cast<int>(n));
  one.master = static_cast<int>(std::distance(all.begin(), all.find(one.master)));
  out.groups.push_back(one);
  return out;
}

std::string StructuralKey(const FusedGraph& fused) {
  const Graph& g = fused.graph;
  auto desc = [&](int v) {
    return absl::StrCat(DTypeName(g.values()[v].desc.dtype),
                        ShapeToString(g.values()[v].desc.shape));
  };
  std::string key = "in";
  for (int v : g.inputs()) absl::StrAppend(&key, " %", v, ":", desc(v));
  for (const Node& node : g.nodes()) {
    absl::StrAppend(&key, "\n", node.op, "(");
    for (int v : node.inputs) absl::StrAppend(&key, " %", v);
    absl::StrAppend(&key, " ) {", ExactAttributes(node.attrs), "} ->");
    for (int v : node.outputs) absl::StrAppend(&key, " %", v, ":", desc(v));
  }
  absl::StrAppend(&key, "\nout");
  for (int v : g.outputs()) absl::StrAppend(&key, " %", v);
  for (const FusionGroup& group : fused.groups) {
    absl::StrAppend(&key, "\ngroup");
    for (int n : group.nodes) absl::StrAppend(&key, " ", n);
  }
  return key;
}

}  // namespace cinn_like::hlir
