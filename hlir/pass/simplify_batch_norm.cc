/// \file batch_norm -> scale and shift, built from primitive ops through the graph rewriter.
#include "hlir/pass/simplify_batch_norm.h"

#include "absl/strings/str_cat.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// Emits the scale-and-shift form of batch_norm node `n`; returns the new output value.
absl::StatusOr<int> EmitScaleShift(GraphRewriter& rw, const Node& node) {
  const Graph& old = rw.old_graph();
  const TensorDesc& x_desc = old.values()[node.inputs[0]].desc;
  const std::string& out_name = old.values()[node.outputs[0]].name;
  const int rank = static_cast<int>(x_desc.shape.size());
  auto axis_attr = GetInt(node.attrs, "axis", "batch_norm", 1);
  if (!axis_attr.ok()) return axis_attr.status();
  auto axis = NormalizeAxis(*axis_attr, rank, "batch_norm");
  if (!axis.ok()) return axis.status();
  auto eps = GetFloat(node.attrs, "epsilon", "batch_norm", 1e-5);
  if (!eps.ok()) return eps.status();
  int x = rw.Map(node.inputs[0]), scale = rw.Map(node.inputs[1]), bias = rw.Map(node.inputs[2]),
      mean = rw.Map(node.inputs[3]), var = rw.Map(node.inputs[4]);

  // Emits one node with a single output (named after the batch_norm output when `final`);
  // after the first error it emits nothing and `status` keeps that error.
  absl::Status status;
  auto emit = [&](const std::string& op, const std::vector<int>& in, const AttributeMap& attrs,
                  bool final = false) -> int {
    if (!status.ok()) return -1;
    std::vector<std::string> names;
    if (final) names.push_back(out_name);
    auto outs = rw.AddNode(op, in, attrs, out_name + "_bn", names);
    if (!outs.ok()) status = outs.status();
    return outs.ok() ? (*outs)[0] : -1;
  };
  // 16-bit floats compute in float32 and round once at the end, as PyTorch's kernels do: s and t
  // rounded to float16 put x * s + t off by more than float16's tolerance.
  const bool narrow = x_desc.dtype == DType::kFloat16 || x_desc.dtype == DType::kBFloat16;
  const std::string dtype = narrow ? "float32" : DTypeName(x_desc.dtype);
  auto widen = [&](int v) { return narrow ? emit("cast", {v}, {{"dtype", dtype}}) : v; };
  x = widen(x), scale = widen(scale), bias = widen(bias), mean = widen(mean), var = widen(var);
  int e = emit("fill", {}, {{"shape", std::vector<int64_t>{}}, {"value", *eps}, {"dtype", dtype}});
  int s = emit("div", {scale, emit("sqrt", {emit("add", {var, e}, {})}, {})}, {});
  int t = emit("sub", {bias, emit("mul", {mean, s}, {})}, {});
  if (*axis + 1 < rank) {  // [C] -> [C, 1, ..., 1]
    std::vector<int64_t> axes;
    for (int d = 1; d < rank - *axis; ++d) axes.push_back(d);
    s = emit("expand_dims", {s}, {{"axes", axes}});
    t = emit("expand_dims", {t}, {{"axes", axes}});
  }
  int y = emit("add", {emit("mul", {x, s}, {}), t}, {}, !narrow);
  if (narrow) {
    y = emit("cast", {y}, {{"dtype", std::string(DTypeName(x_desc.dtype))}}, true);
  }
  if (!status.ok()) return status;
  return y;
}

}  // namespace

absl::StatusOr<Graph> SimplifyBatchNorm(const Graph& graph) {
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    if (node.op != "batch_norm") {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    auto y = EmitScaleShift(rw, node);
    if (!y.ok()) {
      return absl::Status(y.status().code(), absl::StrCat("batch_norm simplification of ",
                                                          graph.values()[node.outputs[0]].name,
                                                          ": ", y.status().message()));
    }
    rw.SetMap(node.outputs[0], *y);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
