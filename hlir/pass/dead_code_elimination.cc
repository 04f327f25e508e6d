/// \file Dead-code elimination: mark backwards from the outputs, copy the marked nodes.
#include "hlir/pass/dead_code_elimination.h"

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {

absl::StatusOr<Graph> EliminateDeadCode(const Graph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes().size());
  std::vector<bool> live_value(graph.values().size(), false), live_node(num_nodes, false);
  for (int v : graph.outputs()) live_value[v] = true;
  for (int n = num_nodes - 1; n >= 0; --n) {  // nodes are in topological order
    for (int v : graph.nodes()[n].outputs) live_node[n] = live_node[n] || live_value[v];
    if (!live_node[n]) continue;
    for (int v : graph.nodes()[n].inputs) live_value[v] = true;
  }
  GraphRewriter rw(graph);
  for (int n = 0; n < num_nodes; ++n) {
    if (!live_node[n]) continue;
    absl::Status s = rw.CopyNode(n);
    if (!s.ok()) return s;
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
