/// \file Split into slices, through the graph rewriter.
#include "hlir/pass/split_to_slices.h"

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {

absl::StatusOr<Graph> SplitToSlices(const Graph& graph) {
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    if (node.op != "split" || node.inputs.size() != 1) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    const Shape& in = graph.values()[node.inputs[0]].desc.shape;
    auto axis = GetInt(node.attrs, "axis", "split", 0);
    if (!axis.ok()) return axis.status();
    const int64_t a = *axis < 0 ? *axis + static_cast<int64_t>(in.size()) : *axis;
    int64_t start = 0;
    for (int out : node.outputs) {
      // The output's extent along the axis (inference resolved a -1 section already).
      const int64_t size = graph.values()[out].desc.shape[a].value;
      const std::string& name = graph.values()[out].name;
      AttributeMap attrs{{"axes", std::vector<int64_t>{a}},
                         {"starts", std::vector<int64_t>{start}},
                         {"ends", std::vector<int64_t>{start + size}}};
      auto made = rw.AddNode("slice", {rw.Map(node.inputs[0])}, attrs, name, {name});
      if (!made.ok()) return made.status();
      rw.SetMap(out, (*made)[0]);
      start += size;
    }
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
