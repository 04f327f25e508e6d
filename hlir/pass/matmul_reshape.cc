/// \file Reshape folding into matmuls, through the graph rewriter.
#include "hlir/pass/matmul_reshape.h"

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

class Folder {
 public:
  explicit Folder(const Graph& graph) : graph_(graph), consumers_(ValueConsumers(graph)) {}

  absl::StatusOr<Graph> Run() {
    const int num_nodes = static_cast<int>(graph_.nodes().size());
    std::vector<bool> absorbed(num_nodes, false);  // a reshape back, read directly
    GraphRewriter rw(graph_);
    for (int n = 0; n < num_nodes; ++n) {
      if (absorbed[n]) continue;
      const int source = Source(n);
      absl::Status s =
          source < 0 || rw.Map(source) < 0 ? rw.CopyNode(n) : Fold(rw, n, source, &absorbed);
      if (!s.ok()) return s;
    }
    return rw.Finish();
  }

 private:
  const Node& NodeAt(int n) const { return graph_.nodes()[n]; }
  const Shape& ShapeOf(int v) const { return graph_.values()[v].desc.shape; }

  /// For a matmul node `n` that folds: the value its x operand is a reshape of; else -1.
  int Source(int n) const {
    const Node& mm = NodeAt(n);
    if (mm.op != "matmul" || mm.inputs.size() < 2 || ShapeOf(mm.inputs[1]).size() != 2) return -1;
    auto tx = GetBool(mm.attrs, "transpose_x", "matmul", false);
    if (!tx.ok() || *tx) return -1;
    const int p = graph_.values()[mm.inputs[0]].producer;
    if (p < 0 || NodeAt(p).op != "reshape") return -1;
    const int source = NodeAt(p).inputs[0];
    const Shape &from = ShapeOf(source), &to = ShapeOf(mm.inputs[0]);
    // A merge of at least two leading dims: [..., K] -> [R, K] with R their product (an
    // identity reshape of a matrix is left alone: its source may be another fold's output).
    if (from.size() < 3 || to.size() != 2 || !IsStatic(from) || from.back() != to.back() ||
        !IsStatic(to) || !IsStatic(ShapeOf(mm.outputs[0]))) {
      return -1;
    }
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < from.size(); ++d) rows *= from[d].value;
    // A returned product stays [R, N]: folded, the returned value would be a reshape of the
    // folded product, stored a second time (by a copy kernel, or by a reader's kernel) from a
    // temporary as large (a language model's logits: 196 MiB and a 206 MB copy), where the
    // library call reads the unfolded x through its reshape anyway.
    return rows == to[0].value && !IsGraphOutput(graph_, mm.outputs[0]) ? source : -1;
  }

  absl::Status Fold(GraphRewriter& rw, int n, int source, std::vector<bool>* absorbed) {
    const Node& mm = NodeAt(n);
    const int out = mm.outputs[0];
    std::vector<int> inputs = {rw.Map(source)};
    for (size_t i = 1; i < mm.inputs.size(); ++i) inputs.push_back(rw.Map(mm.inputs[i]));
    Shape folded = ShapeOf(source);
    folded.back() = ShapeOf(out).back();
    // The one reader, a reshape to the folded shape: its value is the new matmul's.
    int back = -1;
    if (consumers_[out].size() == 1 && !IsGraphOutput(graph_, out)) {
      const int r = consumers_[out][0];
      if (NodeAt(r).op == "reshape" && ShapeOf(NodeAt(r).outputs[0]) == folded) back = r;
    }
    if (back >= 0) {
      const int v = NodeAt(back).outputs[0];
      const std::string& name = graph_.values()[v].name;
      auto made = rw.AddNode("matmul", inputs, mm.attrs, name, {name});
      if (!made.ok()) return made.status();
      rw.SetMap(v, (*made)[0]);
      (*absorbed)[back] = true;
      return absl::OkStatus();
    }
    const std::string& name = graph_.values()[out].name;
    auto made = rw.AddNode("matmul", inputs, mm.attrs, name + "_folded");
    if (!made.ok()) return made.status();
    std::vector<int64_t> flat;
    for (const Dim& d : ShapeOf(out)) flat.push_back(d.value);
    auto reshaped = rw.AddNode("reshape", {(*made)[0]}, {{"shape", flat}}, name, {name});
    if (!reshaped.ok()) return reshaped.status();
    rw.SetMap(out, (*reshaped)[0]);
    return absl::OkStatus();
  }

  const Graph& graph_;
  std::vector<std::vector<int>> consumers_;
};

}  // namespace

absl::StatusOr<Graph> FoldReshapeIntoMatmul(const Graph& graph) { return Folder(graph).Run(); }

}  // namespace cinn_like::hlir
