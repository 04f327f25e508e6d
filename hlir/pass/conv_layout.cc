/// \file The conv layout pass, through the graph rewriter.
#include "hlir/pass/conv_layout.h"

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

/// Whether conv2d node `node` is one to rewrite: float16, NCHW, symmetric paddings (what the
/// channels-last library call takes; others would only gain transposes).
bool Rewrites(const Graph& graph, const Node& node) {
  if (node.op != "conv2d" || node.inputs.size() < 2) return false;
  if (graph.values()[node.inputs[0]].desc.dtype != DType::kFloat16) return false;
  auto format = GetString(node.attrs, "data_format", "conv2d", "NCHW");
  if (!format.ok() || *format != "NCHW") return false;
  auto p = GetInts(node.attrs, "paddings", "conv2d", std::vector<int64_t>{0, 0});
  return p.ok() && (p->size() == 2 || (p->size() == 4 && (*p)[0] == (*p)[1] && (*p)[2] == (*p)[3]));
}

/// Whether `node` is a transpose with permutation `perm`.
bool IsTranspose(const Node& node, const std::vector<int64_t>& perm) {
  if (node.op != "transpose") return false;
  auto p = GetInts(node.attrs, "perm", "transpose", {});
  return p.ok() && *p == perm;
}

}  // namespace

absl::StatusOr<Graph> ConvToChannelsLast(const Graph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes().size());
  GraphRewriter rw(graph);
  for (int n = 0; n < num_nodes; ++n) {
    const Node& node = graph.nodes()[n];
    if (!Rewrites(graph, node)) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    const std::string& name = graph.values()[node.outputs[0]].name;
    // x and w channels last: x read from before a transpose to NCHW where there is one.
    std::vector<int> inputs;
    for (int k = 0; k < 2; ++k) {
      const int v = node.inputs[k];
      const int p = graph.values()[v].producer;
      if (p >= 0 && IsTranspose(graph.nodes()[p], kToNchw)) {
        inputs.push_back(rw.Map(graph.nodes()[p].inputs[0]));
        continue;
      }
      auto t = rw.AddNode("transpose", {rw.Map(v)}, {{"perm", kToNhwc}},
                          graph.values()[v].name + "_nhwc");
      if (!t.ok()) return t.status();
      inputs.push_back((*t)[0]);
    }
    if (node.inputs.size() == 3) inputs.push_back(rw.Map(node.inputs[2]));
    AttributeMap attrs = node.attrs;
    attrs["data_format"] = std::string("NHWC");
    auto conv = rw.AddNode("conv2d", inputs, attrs, name + "_nhwc");
    if (!conv.ok()) return conv.status();
    auto back = rw.AddNode("transpose", {(*conv)[0]}, {{"perm", kToNchw}}, name, {name});
    if (!back.ok()) return back.status();
    rw.SetMap(node.outputs[0], (*back)[0]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
