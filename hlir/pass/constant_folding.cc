/// \file Constant folding: known values travel in node order; a node with all inputs known is
/// run alone in a one-node graph by the reference interpreter.
#include "hlir/pass/constant_folding.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/pass/graph_rewriter.h"
#include "hlir/reference_interpreter.h"

namespace cinn_like::hlir {
namespace {

bool Small(const TensorDesc& d, int64_t max_elements) {
  return IsStatic(d.shape) && NumElements(d.shape) <= max_elements;
}

/// Whether every element of `t` is the first's, bit for bit (+0 and -0 differ; NaN never
/// equals, so a NaN makes it not uniform), a value a fill of its dtype holds exactly (an
/// integer beyond 2^53 has no exact double: its node stays).
bool Uniform(const HostTensor& t) {
  if (t.data.empty()) return false;
  const double first = t.data[0];
  if (!IsFloat(t.dtype) && t.dtype != DType::kBool && std::fabs(first) >= 0x1p53) return false;
  for (double x : t.data) {
    if (!(x == first) || std::signbit(x) != std::signbit(first)) return false;
  }
  return true;
}

/// The outputs of `node` on the known `inputs`, computed by the reference interpreter.
absl::StatusOr<std::vector<HostTensor>> Evaluate(const Node& node,
                                                 const std::vector<HostTensor>& inputs) {
  Graph g;
  std::vector<int> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto id =
        g.AddInput(absl::StrCat("in", i), TensorDesc{inputs[i].dtype, MakeShape(inputs[i].shape)});
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  auto outs = g.AddNode(node.op, ids, node.attrs, {});
  if (!outs.ok()) return outs.status();
  for (int v : *outs) {
    absl::Status s = g.MarkOutput(v);
    if (!s.ok()) return s;
  }
  return RunReference(g, inputs);
}

}  // namespace

absl::StatusOr<Graph> FoldConstants(const Graph& graph, int64_t max_elements) {
  std::vector<std::optional<HostTensor>> known(graph.values().size());
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    bool foldable = true;
    for (int v : node.outputs) {
      foldable =
          foldable && Small(graph.values()[v].desc, std::max(max_elements, kMaxUniformElements));
    }
    std::vector<HostTensor> inputs;
    for (int v : node.inputs) {
      foldable = foldable && known[v].has_value();
      if (foldable) inputs.push_back(*known[v]);
    }
    if (!foldable) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    auto values = Evaluate(node, inputs);
    if (!values.ok()) {
      return absl::Status(values.status().code(),
                          absl::StrCat("constant folding of node ", n, " (", node.op,
                                       "): ", values.status().message()));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) known[node.outputs[i]] = (*values)[i];
    if (node.inputs.empty()) {  // already a constant: keep it
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    bool replace = true;  // every output small or uniform
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      replace = replace && (Small(graph.values()[node.outputs[i]].desc, max_elements) ||
                            Uniform((*values)[i]));
    }
    if (!replace) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      int v = node.outputs[i];
      const HostTensor& t = (*values)[i];
      const std::string dtype(DTypeName(t.dtype));
      const bool small = Small(graph.values()[v].desc, max_elements);
      const AttributeMap attrs =
          small ? AttributeMap{{"values", t.data}, {"shape", t.shape}, {"dtype", dtype}}
                : AttributeMap{{"value", t.data[0]}, {"shape", t.shape}, {"dtype", dtype}};
      auto out = rw.AddNode(small ? "constant" : "fill", {}, attrs, "", {graph.values()[v].name});
      if (!out.ok()) return out.status();
      rw.SetMap(v, (*out)[0]);
    }
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
