/// \file Common-subexpression elimination: one table from (op, new inputs, attributes, compared
/// bit for bit) to the first node that computed it, in node order.
#include "hlir/pass/common_subexpression_elimination.h"

#include <map>
#include <tuple>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {

absl::StatusOr<Graph> EliminateCommonSubexpressions(const Graph& graph) {
  using Key = std::tuple<std::string, std::vector<int>, std::string>;
  std::map<Key, int> seen;  // key -> old node whose outputs are kept
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    std::vector<int> inputs;
    for (int v : node.inputs) inputs.push_back(rw.Map(v));
    Key key{node.op, inputs, ExactAttributes(node.attrs)};
    bool is_output = false;
    for (int v : node.outputs) is_output = is_output || IsGraphOutput(graph, v);
    auto it = seen.find(key);
    if (it != seen.end() && !is_output) {
      const Node& first = graph.nodes()[it->second];
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        rw.SetMap(node.outputs[i], rw.Map(first.outputs[i]));
      }
      continue;
    }
    absl::Status s = rw.CopyNode(n);
    if (!s.ok()) return s;
    if (it == seen.end()) seen.emplace(std::move(key), n);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
