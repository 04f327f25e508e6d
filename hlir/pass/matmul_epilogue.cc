/// \file Matmul epilogue folding, through the graph rewriter: chains are found first (each
/// folded node read only by the next), then each is emitted as one matmul at its last node.
#include "hlir/pass/matmul_epilogue.h"

#include <map>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// A matmul and what folds into it.
struct Chain {
  int matmul = -1;
  int bias = -1;                    // old value, or -1
  std::string activation = "none";  // the matmul's "activation" attribute
};

class Folder {
 public:
  explicit Folder(const Graph& graph) : graph_(graph), consumers_(ValueConsumers(graph)) {}

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

  /// Whether node `n` is a matmul that can take an epilogue.
  bool Folds(int n) const {
    const Node& node = graph_.nodes()[n];
    if (node.op != "matmul" || node.outputs.size() != 1) return false;
    auto act = GetString(node.attrs, "activation", "matmul", "none");
    return act.ok() && *act == "none" && IsFloat(Desc(Out(n)).dtype);
  }

  /// The one node reading value `v` when v is no graph output and that node reads it once.
  int OnlyReader(int v) const {
    if (consumers_[v].size() != 1 || IsGraphOutput(graph_, v)) return -1;
    const Node& reader = graph_.nodes()[consumers_[v][0]];
    int uses = 0;
    for (int in : reader.inputs) uses += in == v;
    return uses == 1 && reader.outputs.size() == 1 ? consumers_[v][0] : -1;
  }

  /// The bias operand of add node `add` over product `v`: same dtype, its elements along the
  /// product's last dim only (shape [..., 1, n]), the add's result shaped as the product.
  int BiasOperand(int add, int v) const {
    const Node& node = graph_.nodes()[add];
    if (node.inputs.size() != 2) return -1;
    const int bias = node.inputs[0] == v ? node.inputs[1] : node.inputs[0];
    const TensorDesc &b = Desc(bias), &p = Desc(v);
    if (b.dtype != p.dtype || Desc(Out(add)).shape != p.shape || b.shape.empty() ||
        b.shape.size() > p.shape.size() || b.shape.back() != p.shape.back()) {
      return -1;
    }
    for (size_t d = 0; d + 1 < b.shape.size(); ++d) {
      if (!b.shape[d].is_one()) return -1;
    }
    if (b.shape.size() > 1 && b.shape.back().is_symbolic()) return -1;  // reshaped statically
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
        auto flat =
            rw.AddNode("reshape", {bias}, {{"shape", std::vector<int64_t>{shape.back().value}}},
                       name + "_bias");
        if (!flat.ok()) return flat.status();
        bias = (*flat)[0];
      }
      inputs.push_back(bias);
    }
    AttributeMap attrs = mm.attrs;
    attrs["activation"] = chain.activation;
    auto outs = rw.AddNode("matmul", inputs, attrs, name, {name});
    if (!outs.ok()) return outs.status();
    rw.SetMap(out, (*outs)[0]);
    return absl::OkStatus();
  }

  const Graph& graph_;
  std::vector<std::vector<int>> consumers_;
};

}  // namespace

absl::StatusOr<Graph> FoldMatmulEpilogue(const Graph& graph) { return Folder(graph).Run(); }

}  // namespace cinn_like::hlir
