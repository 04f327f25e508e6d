/// \file Reshape simplification, through the graph rewriter.
#include "hlir/pass/simplify_reshapes.h"

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {

absl::StatusOr<Graph> SimplifyReshapes(const Graph& graph) {
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    if (node.op != "reshape") {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    // The value this reshape reshapes, in the new graph: past a reshape that produced it.
    const int in = rw.Map(node.inputs[0]), out = node.outputs[0];
    int source = in;
    const int producer = rw.new_graph().values()[in].producer;
    if (producer >= 0 && rw.new_graph().nodes()[producer].op == "reshape") {
      source = rw.new_graph().nodes()[producer].inputs[0];
    }
    const Shape& shape = graph.values()[out].desc.shape;
    if (rw.new_graph().values()[source].desc.shape == shape && !IsGraphOutput(graph, out)) {
      rw.SetMap(out, source);
    } else if (source != in) {
      const std::string& name = graph.values()[out].name;
      auto made = rw.AddNode("reshape", {source}, node.attrs, name, {name});
      if (!made.ok()) return made.status();
      rw.SetMap(out, (*made)[0]);
    } else {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
    }
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
