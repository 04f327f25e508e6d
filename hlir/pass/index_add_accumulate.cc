/// \file index_add accumulating into the other term of a sum, through the graph rewriter.
#include "hlir/pass/index_add_accumulate.h"

#include <optional>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// Whether value `v` is computed by a `fill` of 0.
bool IsZeroFill(const Graph& graph, int v) {
  const int p = graph.values()[v].producer;
  if (p < 0 || graph.nodes()[p].op != "fill") return false;
  auto value = GetFloat(graph.nodes()[p].attrs, "value", "fill", 0.0);
  return value.ok() && *value == 0.0;
}

/// For add node `n`: which of its inputs is an index_add into zeros that the add may absorb
/// (the rewrite's conditions), or none.
std::optional<int> AbsorbedInput(const Graph& graph, const std::vector<std::vector<int>>& readers,
                                 int n) {
  const Node& add = graph.nodes()[n];
  if (add.op != "add" || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) {
    return std::nullopt;
  }
  const TensorDesc& out = graph.values()[add.outputs[0]].desc;
  for (int side = 0; side < 2; ++side) {
    const int v = add.inputs[side], other = add.inputs[1 - side];
    const int p = graph.values()[v].producer;
    if (p < 0 || graph.nodes()[p].op != "index_add") continue;
    if (readers[v].size() != 1 || IsGraphOutput(graph, v)) continue;
    if (!IsZeroFill(graph, graph.nodes()[p].inputs[0])) continue;
    if (!(graph.values()[other].desc == out) || !(graph.values()[v].desc == out)) continue;
    return side;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Graph> AccumulateIndexAddIntoSum(const Graph& graph) {
  const std::vector<std::vector<int>> readers = ValueConsumers(graph);
  const int num_nodes = static_cast<int>(graph.nodes().size());
  // The add absorbing each index_add node, found before the walk: the index_add comes first
  // and is dropped there.
  std::vector<int> absorbed_by(num_nodes, -1);
  std::vector<int> side_of(num_nodes, -1);
  for (int n = 0; n < num_nodes; ++n) {
    if (auto side = AbsorbedInput(graph, readers, n)) {
      const int v = graph.nodes()[n].inputs[*side];
      absorbed_by[graph.values()[v].producer] = n;
      side_of[n] = *side;
    }
  }
  GraphRewriter rw(graph);
  for (int n = 0; n < num_nodes; ++n) {
    if (absorbed_by[n] >= 0) continue;
    if (side_of[n] < 0) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    const Node& add = graph.nodes()[n];
    const Node& scatter = graph.nodes()[graph.values()[add.inputs[side_of[n]]].producer];
    const int base = add.inputs[1 - side_of[n]];
    const std::string& name = graph.values()[add.outputs[0]].name;
    auto out = rw.AddNode("index_add",
                          {rw.Map(base), rw.Map(scatter.inputs[1]), rw.Map(scatter.inputs[2])},
                          scatter.attrs, name, {name});
    if (!out.ok()) return out.status();
    rw.SetMap(add.outputs[0], (*out)[0]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
