/// \file Matmul and conv2d epilogue folding, through the graph rewriter: chains are found first
/// (each folded node read only by the next), then each is emitted as one node at its last.
#include "hlir/pass/matmul_epilogue.h"

#include <map>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// A matmul (or conv2d) and what folds into it.
struct Chain {
  int matmul = -1;
  int bias = -1;                    // old value, or -1
  std::string activation = "none";  // the node's "activation" attribute
};

class Folder {
 public:
  /// Folds into nodes of `op`: "matmul" (the bias along the product's last dim) or "conv2d"
  /// (NCHW: the bias along dim 1, the channels).
  Folder(const Graph& graph, std::string op)
      : graph_(graph), consumers_(ValueConsumers(graph)), op_(std::move(op)) {}

  absl::StatusOr<Graph> Run() {
    const int num_nodes = static_cast<int>(graph_.nodes().size());
    std::vector<bool> folded(num_nodes, false);
    std::map<int, Chain> at_last;  // last node of a chain -> the chain
    for (int n = 0; n < num_nodes; ++n) {
      if (!Folds(n)) continue;
      Chain chain;
      chain.matmul = n;
      std::vector<int> members = {n};
      // A node another chain took (add(mm1, mm2) of two [1, n] products) is not taken again,
      // nor a bias that such a chain's folded intermediate computes.
      int next = OnlyReader(Out(n));
      if (next >= 0 && !folded[next] && graph_.nodes()[next].op == "add" &&
          graph_.nodes()[n].inputs.size() == 2) {
        const int bias = BiasOperand(next, Out(n));
        const int p = bias >= 0 ? graph_.values()[bias].producer : -1;
        if (bias >= 0 && (p < 0 || !folded[p] || at_last.count(p))) {
          chain.bias = bias, members.push_back(next);
        }
      }
      next = OnlyReader(Out(members.back()));
      if (next >= 0 && !folded[next]) {
        std::string act = Activation(graph_.nodes()[next]);
        if (!act.empty()) chain.activation = act, members.push_back(next);
      }
      if (members.size() == 1) continue;
      const int last = members.back();
      for (int m : members) folded[m] = true;
      at_last[last] = chain;
    }
    GraphRewriter rw(graph_);
    for (int n = 0; n < num_nodes; ++n) {
      auto it = at_last.find(n);
      if (it != at_last.end()) {
        absl::Status s = Emit(rw, it->second, Out(n));
        if (!s.ok()) return s;
      } else if (!folded[n]) {
        absl::Status s = rw.CopyNode(n);
        if (!s.ok()) return s;
      }
    }
    return rw.Finish();
  }

 private:
  int Out(int node) const { return graph_.nodes()[node].outputs[0]; }
  const TensorDesc& Desc(int value) const { return graph_.values()[value].desc; }

  /// Whether node `n` is a node of op_ that can take an epilogue (a conv2d: NCHW).
  bool Folds(int n) const {
    const Node& node = graph_.nodes()[n];
    if (node.op != op_ || node.outputs.size() != 1) return false;
    auto act = GetString(node.attrs, "activation", op_, "none");
    auto format = GetString(node.attrs, "data_format", op_, "NCHW");
    return act.ok() && *act == "none" && format.ok() && *format == "NCHW" &&
           IsFloat(Desc(Out(n)).dtype);
  }

  /// The dim of the product a bias runs along: a matmul's last, a convolution's channels.
  size_t BiasAxis(const Shape& product) const { return op_ == "conv2d" ? 1 : product.size() - 1; }

  /// The one node reading value `v` when v is no graph output and that node reads it once.
  int OnlyReader(int v) const {
    if (consumers_[v].size() != 1 || IsGraphOutput(graph_, v)) return -1;
    const Node& reader = graph_.nodes()[consumers_[v][0]];
    int uses = 0;
    for (int in : reader.inputs) uses += in == v;
    return uses == 1 && reader.outputs.size() == 1 ? consumers_[v][0] : -1;
  }

  /// The bias operand of add node `add` over product `v`: same dtype, its elements along the
  /// product's bias axis only (a matmul's [..., 1, n], a convolution's [c, 1, 1] or
  /// [1, c, 1, 1]), the add's result shaped as the product.
  int BiasOperand(int add, int v) const {
    const Node& node = graph_.nodes()[add];
    if (node.inputs.size() != 2) return -1;
    const int bias = node.inputs[0] == v ? node.inputs[1] : node.inputs[0];
    const TensorDesc &b = Desc(bias), &p = Desc(v);
    const size_t axis = BiasAxis(p.shape), rank = b.shape.size();
    // b's dims align with the product's last ones: b's dim `at` is the product's axis.
    if (b.dtype != p.dtype || Desc(Out(add)).shape != p.shape || rank == 0 ||
        rank > p.shape.size() || rank < p.shape.size() - axis) {
      return -1;
    }
    const size_t at = axis - (p.shape.size() - rank);
    for (size_t d = 0; d < rank; ++d) {
      if (d == at ? b.shape[d] != p.shape[axis] : !b.shape[d].is_one()) return -1;
    }
    if (rank > 1 && b.shape[at].is_symbolic()) return -1;  // reshaped statically
    return bias;
  }

  /// The "activation" value for an elementwise op the epilogue applies, or empty.
  static std::string Activation(const Node& node) {
    if (node.op == "relu") return "relu";
    if (node.op != "gelu") return "";
    auto approx = GetString(node.attrs, "approximate", "gelu", "none");
    return approx.ok() && *approx == "tanh" ? "gelu_tanh" : "";
  }

  absl::Status Emit(GraphRewriter& rw, const Chain& chain, int out) {
    const Node& mm = graph_.nodes()[chain.matmul];
    std::vector<int> inputs;  // x, y and a bias folded before
    for (int v : mm.inputs) inputs.push_back(rw.Map(v));
    const std::string& name = graph_.values()[out].name;
    if (chain.bias >= 0) {
      int bias = rw.Map(chain.bias);
      const Shape& shape = Desc(chain.bias).shape;
      if (shape.size() > 1) {
        const Shape& product = Desc(mm.outputs[0]).shape;
        const int64_t n = product[BiasAxis(product)].value;
        auto flat =
            rw.AddNode("reshape", {bias}, {{"shape", std::vector<int64_t>{n}}}, name + "_bias");
        if (!flat.ok()) return flat.status();
        bias = (*flat)[0];
      }
      inputs.push_back(bias);
    }
    AttributeMap attrs = mm.attrs;
    attrs["activation"] = chain.activation;
    auto outs = rw.AddNode(op_, inputs, attrs, name, {name});
    if (!outs.ok()) return outs.status();
    rw.SetMap(out, (*outs)[0]);
    return absl::OkStatus();
  }

  const Graph& graph_;
  std::vector<std::vector<int>> consumers_;
  std::string op_;
};

}  // namespace

absl::StatusOr<Graph> FoldMatmulEpilogue(const Graph& graph) {
  return Folder(graph, "matmul").Run();
}

absl::StatusOr<Graph> FoldConvEpilogue(const Graph& graph) { return Folder(graph, "conv2d").Run(); }

}  // namespace cinn_like::hlir
