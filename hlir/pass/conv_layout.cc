/// \file The conv layout pass, through the graph rewriter: a convolution's channels-last result
/// is kept pending (its NCHW form made only where something needs it), elementwise ops on it run
/// channels last, and a convolution reading a pending value reads it directly.
#include "hlir/pass/conv_layout.h"

#include <map>
#include <set>

#include "hlir/op.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

/// Whether conv2d node `node` is NCHW with symmetric paddings (what the channels-last library
/// call takes; others would only gain transposes) of float16 or float32 operands.
bool TakesChannelsLast(const Graph& graph, const Node& node) {
  if (node.op != "conv2d" || node.inputs.size() < 2) return false;
  const DType t = graph.values()[node.inputs[0]].desc.dtype;
  if (t != DType::kFloat16 && t != DType::kFloat32) return false;
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

class ChannelsLast {
 public:
  explicit ChannelsLast(const Graph& graph) : graph_(graph), rw_(graph) {
    for (const Node& n : graph.nodes()) {
      if (IsTranspose(n, kToNhwc)) read_as_nhwc_.insert(n.inputs[0]);
    }
    for (const Node& n : graph.nodes()) active_ = active_ || Rewrites(n);
  }

  absl::StatusOr<Graph> Run() {
    for (int n = 0; n < static_cast<int>(graph_.nodes().size()); ++n) {
      const Node& node = graph_.nodes()[n];
      absl::Status s = Rewrites(node)                          ? Conv(node)
                       : active_ && IsTranspose(node, kToNchw) ? Defer(node)
                       : Sinks(node)                           ? Elementwise(node)
                                                               : Copy(n);
      if (!s.ok()) return s;
    }
    for (int v : graph_.outputs()) {
      auto m = Materialize(v);
      if (!m.ok()) return m.status();
    }
    return rw_.Finish();
  }

 private:
  /// Whether conv2d `node` runs channels last: float16 ones always (cuDNN's tensor-core kernels
  /// take NHWC), float32 ones where their neighbours are channels last already: the input is
  /// (pending, or a transpose from NHWC) or a transpose reads the result as NHWC. ConvNeXt's
  /// blocks are the case: a depthwise convolution whose result is permuted to NHWC for a
  /// LayerNorm over its channels, the block's result permuted back and added to the residual.
  bool Rewrites(const Node& node) const {
    if (!TakesChannelsLast(graph_, node)) return false;
    if (graph_.values()[node.inputs[0]].desc.dtype == DType::kFloat16) return true;
    const int x = node.inputs[0], p = graph_.values()[x].producer;
    return pending_.count(x) || (p >= 0 && IsTranspose(graph_.nodes()[p], kToNchw)) ||
           read_as_nhwc_.count(node.outputs[0]);
  }

  /// A transpose to NCHW in a graph with channels-last convolutions: its result stays pending
  /// (its input is its channels-last form), so that elementwise ops after it run channels last
  /// and a convolution reading it reads its input.
  absl::Status Defer(const Node& node) {
    auto nhwc = Materialize(node.inputs[0]);
    if (!nhwc.ok()) return nhwc.status();
    pending_[node.outputs[0]] = *nhwc;
    return absl::OkStatus();
  }

  /// The new value standing for old value `v`: a pending one's NCHW form made now, under v's
  /// own name (it may be a graph output).
  absl::StatusOr<int> Materialize(int v) {
    if (rw_.Map(v) >= 0) return rw_.Map(v);
    const std::string& name = graph_.values()[v].name;
    auto back = rw_.AddNode("transpose", {pending_.at(v)}, {{"perm", kToNchw}}, name, {name});
    if (!back.ok()) return back.status();
    rw_.SetMap(v, (*back)[0]);
    return (*back)[0];
  }

  absl::Status Copy(int n) {
    for (int v : graph_.nodes()[n].inputs) {
      auto m = Materialize(v);
      if (!m.ok()) return m.status();
    }
    return rw_.CopyNode(n);
  }

  /// Old value `v` channels last: a pending value as it is, the input of a transpose to NCHW,
  /// else a transpose of it.
  absl::StatusOr<int> ChannelsLastOf(int v) {
    if (auto it = pending_.find(v); it != pending_.end()) return it->second;
    const int p = graph_.values()[v].producer;
    if (p >= 0 && IsTranspose(graph_.nodes()[p], kToNchw))
      return Materialize(graph_.nodes()[p].inputs[0]);
    auto m = Materialize(v);
    if (!m.ok()) return m.status();
    auto t = rw_.AddNode("transpose", {*m}, {{"perm", kToNhwc}}, graph_.values()[v].name + "_nhwc");
    if (!t.ok()) return t.status();
    return (*t)[0];
  }

  /// `node` channels last, its result pending. A bias becomes an add after the convolution
  /// (broadcast over the channels, the last dim; where their count is static), which fuses into
  /// the result's readers: cuDNN adds a bias with a kernel of its own (op_generic_tensor_kernel),
  /// a second pass over the whole result.
  absl::Status Conv(const Node& node) {
    std::vector<int> inputs;
    for (int k = 0; k < 2; ++k) {
      auto v = ChannelsLastOf(node.inputs[k]);
      if (!v.ok()) return v.status();
      inputs.push_back(*v);
    }
    const std::string& name = graph_.values()[node.outputs[0]].name;
    AttributeMap attrs = node.attrs;
    attrs["data_format"] = std::string("NHWC");
    const Dim& channels = graph_.values()[node.outputs[0]].desc.shape[1];
    const bool bias_after = node.inputs.size() == 3 && !channels.is_symbolic();
    if (node.inputs.size() == 3 && !bias_after) {
      auto bias = Materialize(node.inputs[2]);
      if (!bias.ok()) return bias.status();
      inputs.push_back(*bias);
    }
    auto conv = rw_.AddNode("conv2d", inputs, attrs, name + "_nhwc");
    if (!conv.ok()) return conv.status();
    int result = (*conv)[0];
    if (bias_after) {
      auto bias = Materialize(node.inputs[2]);
      if (!bias.ok()) return bias.status();
      auto row =
          rw_.AddNode("reshape", {*bias},
                      {{"shape", std::vector<int64_t>{1, 1, 1, channels.value}}}, name + "_bias");
      if (!row.ok()) return row.status();
      auto sum = rw_.AddNode("add", {result, (*row)[0]}, {}, name + "_nhwc_biased");
      if (!sum.ok()) return sum.status();
      result = (*sum)[0];
    }
    pending_[node.outputs[0]] = result;
    return absl::OkStatus();
  }

  /// Whether elementwise node `node` can run channels last: it reads a pending value, has its
  /// shape, and its other inputs broadcast to that shape (a rank of at most 4).
  bool Sinks(const Node& node) const {
    auto def = OpRegistry::Global().Find(node.op);
    if (!def.ok() || node.outputs.size() != 1 ||
        ((*def)->pattern != OpPattern::kElementwise && (*def)->pattern != OpPattern::kBroadcast)) {
      return false;
    }
    for (const char* shaping : {"shape", "axis", "axes", "perm"}) {
      if (node.attrs.count(shaping)) return false;
    }
    const Shape& out = graph_.values()[node.outputs[0]].desc.shape;
    bool reads_pending = false;
    for (int v : node.inputs) {
      const Shape& shape = graph_.values()[v].desc.shape;
      if (pending_.count(v)) {
        if (shape != out) return false;
        reads_pending = true;
      } else if (shape.size() > 4 || !IsStatic(shape)) {
        return false;
      }
    }
    return reads_pending && out.size() == 4;
  }

  /// `node` on channels-last operands: pending values as they are, others (broadcast) made
  /// rank 4 and transposed; its result pending.
  absl::Status Elementwise(const Node& node) {
    std::vector<int> inputs;
    for (int v : node.inputs) {
      if (auto it = pending_.find(v); it != pending_.end()) {
        inputs.push_back(it->second);
        continue;
      }
      auto m = Materialize(v);
      if (!m.ok()) return m.status();
      const Shape& shape = graph_.values()[v].desc.shape;
      if (shape.empty()) {  // a scalar broadcasts in any layout
        inputs.push_back(*m);
        continue;
      }
      int four = *m;
      const std::string& name = graph_.values()[v].name;
      if (shape.size() < 4) {
        std::vector<int64_t> dims(4 - shape.size(), 1);
        for (const Dim& d : shape) dims.push_back(d.value);
        auto r = rw_.AddNode("reshape", {four}, {{"shape", dims}}, name + "_4d");
        if (!r.ok()) return r.status();
        four = (*r)[0];
      }
      auto t = rw_.AddNode("transpose", {four}, {{"perm", kToNhwc}}, name + "_nhwc");
      if (!t.ok()) return t.status();
      inputs.push_back((*t)[0]);
    }
    auto out =
        rw_.AddNode(node.op, inputs, node.attrs, graph_.values()[node.outputs[0]].name + "_nhwc");
    if (!out.ok()) return out.status();
    pending_[node.outputs[0]] = (*out)[0];
    return absl::OkStatus();
  }

  const Graph& graph_;
  GraphRewriter rw_;
  /// Old values a transpose to NHWC reads.
  std::set<int> read_as_nhwc_;
  /// Whether a convolution of the graph runs channels last (the transposes to NCHW are
  /// deferred only then).
  bool active_ = false;
  /// Old values whose NCHW form is transpose(new value, kToNchw), not made yet.
  std::map<int, int> pending_;
};

}  // namespace

absl::StatusOr<Graph> ConvToChannelsLast(const Graph& graph) { return ChannelsLast(graph).Run(); }

}  // namespace cinn_like::hlir
