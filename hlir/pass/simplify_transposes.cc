/// \file Transpose simplification, through the graph rewriter.
#include "hlir/pass/simplify_transposes.h"

#include <vector>

#include "hlir/attribute.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// The perm of transpose `node` with negative axes made positive; empty when malformed
/// (inference would have refused it: left alone).
std::vector<int64_t> Perm(const Node& node, size_t rank) {
  auto perm = GetInts(node.attrs, "perm", "transpose");
  if (!perm.ok() || perm->size() != rank) return {};
  std::vector<int64_t> p = *perm;
  for (int64_t& a : p) a = a < 0 ? a + static_cast<int64_t>(rank) : a;
  return p;
}

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

/// Whether new value `source` may become a graph output in place of an identity transpose of
/// it (a weight gradient `transpose(transpose(mm))` would otherwise be copied by a kernel of its
/// own): it is computed by a node (an output is never an input passed through) and no output
/// mapped so far stands for it (two outputs are two buffers).
bool MayStandForOutput(const GraphRewriter& rw, int source) {
  if (rw.new_graph().values()[source].producer < 0) return false;
  for (int o : rw.old_graph().outputs()) {
    if (rw.Map(o) == source) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Graph> SimplifyTransposes(const Graph& graph) {
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    const int out = node.outputs.empty() ? -1 : node.outputs[0];
    const size_t rank = out < 0 ? 0 : graph.values()[out].desc.shape.size();
    std::vector<int64_t> perm = node.op == "transpose" ? Perm(node, rank) : std::vector<int64_t>{};
    if (perm.empty()) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    // y = transpose(x, p1), z = transpose(y, p2): z's axis i is x's axis p1[p2[i]].
    int source = rw.Map(node.inputs[0]);
    const int producer = rw.new_graph().values()[source].producer;
    if (producer >= 0 && rw.new_graph().nodes()[producer].op == "transpose") {
      const Node& first = rw.new_graph().nodes()[producer];
      std::vector<int64_t> p1 = Perm(first, rank);
      if (!p1.empty()) {
        for (int64_t& a : perm) a = p1[a];
        source = first.inputs[0];
      }
    }
    if (IsIdentity(perm) && (!IsGraphOutput(graph, out) || MayStandForOutput(rw, source))) {
      rw.SetMap(out, source);
    } else if (source != rw.Map(node.inputs[0])) {
      const std::string& name = graph.values()[out].name;
      AttributeMap attrs = node.attrs;
      attrs["perm"] = perm;
      auto made = rw.AddNode("transpose", {source}, attrs, name, {name});
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
