/// \file Transpose folding into matmul operands, through the graph rewriter.
#include "hlir/pass/fold_transpose.h"

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// Whether `node` is a transpose swapping the last two of its input's dims, others in place.
bool SwapsLastTwo(const Graph& graph, const Node& node) {
  if (node.op != "transpose" || node.inputs.size() != 1) return false;
  auto perm = GetInts(node.attrs, "perm", "transpose", {});
  const size_t rank = graph.values()[node.inputs[0]].desc.shape.size();
  if (!perm.ok() || rank < 2 || perm->size() != rank) return false;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if ((*perm)[d] != static_cast<int64_t>(d)) return false;
  }
  return (*perm)[rank - 2] == static_cast<int64_t>(rank - 1) &&
         (*perm)[rank - 1] == static_cast<int64_t>(rank - 2);
}

}  // namespace

absl::StatusOr<Graph> FoldTransposeIntoMatmul(const Graph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes().size());
  std::vector<int> producer(graph.values().size(), -1);
  for (int n = 0; n < num_nodes; ++n) {
    for (int v : graph.nodes()[n].outputs) producer[v] = n;
  }
  GraphRewriter rw(graph);
  for (int n = 0; n < num_nodes; ++n) {
    const Node& node = graph.nodes()[n];
    bool folded = false;
    std::vector<int> inputs;
    AttributeMap attrs = node.attrs;
    if (node.op == "matmul" && node.inputs.size() == 2) {
      const char* flags[] = {"transpose_x", "transpose_y"};
      for (int k = 0; k < 2; ++k) {
        int v = node.inputs[k];
        const int p = producer[v];
        if (p >= 0 && SwapsLastTwo(graph, graph.nodes()[p])) {
          auto flag = GetBool(node.attrs, flags[k], "matmul", false);
          if (!flag.ok()) return flag.status();
          attrs[flags[k]] = !*flag;
          v = graph.nodes()[p].inputs[0];
          folded = true;
        }
        inputs.push_back(rw.Map(v));
      }
    }
    if (!folded) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    const std::string& name = graph.values()[node.outputs[0]].name;
    auto outs = rw.AddNode("matmul", inputs, attrs, name, {name});
    if (!outs.ok()) return outs.status();
    rw.SetMap(node.outputs[0], (*outs)[0]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
