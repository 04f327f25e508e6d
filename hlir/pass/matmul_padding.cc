/// \file Matmul padding for aligned library GEMMs, through the graph rewriter.
#include "hlir/pass/matmul_padding.h"

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// Elements per 16 bytes of `t`, or 0 for a type whose matmuls are not padded. float32 is
/// not: without TF32, cuBLAS's float32 kernels lost nothing to unaligned rows, and the copies
/// made GPT-2's float32 training step slower on an H200 (14.45 ms of kernels against 13.96).
int64_t AlignmentOf(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16 ? 8 : 0; }

int64_t RoundUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// The padded length of a dim that is some matrix's row length: `v` itself when aligned or
/// too short to pad.
int64_t Padded(int64_t v, int64_t align) {
  return v % align == 0 || v < kMinPaddedDim ? v : RoundUp(v, align);
}

class Padder {
 public:
  explicit Padder(const Graph& graph) : graph_(graph), rw_(graph) {}

  absl::StatusOr<Graph> Run() {
    for (int n = 0; n < static_cast<int>(graph_.nodes().size()); ++n) {
      absl::Status s = Visit(n);
      if (!s.ok()) return s;
    }
    return rw_.Finish();
  }

 private:
  const Shape& ShapeOf(int v) const { return graph_.values()[v].desc.shape; }

  absl::Status Visit(int n) {
    const Node& node = graph_.nodes()[n];
    if (node.op != "matmul" || node.inputs.size() < 2) return rw_.CopyNode(n);
    const int x = node.inputs[0], y = node.inputs[1], out = node.outputs[0];
    const int64_t align = AlignmentOf(graph_.values()[out].desc.dtype);
    auto tx = GetBool(node.attrs, "transpose_x", "matmul", false);
    auto ty = GetBool(node.attrs, "transpose_y", "matmul", false);
    if (!tx.ok()) return tx.status();
    if (!ty.ok()) return ty.status();
    if (align == 0 || !IsStatic(ShapeOf(x)) || !IsStatic(ShapeOf(y)) || !IsStatic(ShapeOf(out))) {
      return rw_.CopyNode(n);
    }
    const std::vector<int64_t> xs = StaticDims(ShapeOf(x)), ys = StaticDims(ShapeOf(y)),
                               os = StaticDims(ShapeOf(out));
    const size_t rx = xs.size(), ry = ys.size(), ro = os.size();
    const int64_t m = os[ro - 2], n_ = os[ro - 1], k = *tx ? xs[rx - 2] : xs[rx - 1];
    if (NumElements(ShapeOf(out)) * k < kMinPaddedMatmulMacs) return rw_.CopyNode(n);
    // Row lengths: x's is m when x is read transposed, else k; y's is k when transposed, else
    // n; the product's is n. A dim pads only where it is some matrix's row length.
    const int64_t pm = *tx ? Padded(m, align) : m;
    const int64_t pk = !*tx || *ty ? Padded(k, align) : k;
    const int64_t pn = Padded(n_, align);
    if (pm == m && pk == k && pn == n_) return rw_.CopyNode(n);

    const std::string& name = graph_.values()[out].name;
    // Axis of x holding m and k, of y holding k and n.
    const size_t xm = *tx ? rx - 1 : rx - 2, xk = *tx ? rx - 2 : rx - 1;
    const size_t yk = *ty ? ry - 1 : ry - 2, yn = *ty ? ry - 2 : ry - 1;
    auto x2 = Pad(x, rx, {{xm, pm - m}, {xk, pk - k}}, name + "_x");
    if (!x2.ok()) return x2.status();
    auto y2 = Pad(y, ry, {{yk, pk - k}, {yn, pn - n_}}, name + "_y");
    if (!y2.ok()) return y2.status();
    std::vector<int> inputs = {*x2, *y2};
    if (node.inputs.size() == 3) {  // the bias, [n]
      auto b2 = Pad(node.inputs[2], 1, {{0, pn - n_}}, name + "_bias");
      if (!b2.ok()) return b2.status();
      inputs.push_back(*b2);
    }
    auto product = rw_.AddNode("matmul", inputs, node.attrs, name + "_padded");
    if (!product.ok()) return product.status();
    const int64_t r = static_cast<int64_t>(ro);
    auto sliced = rw_.AddNode("slice", {(*product)[0]},
                              {{"axes", std::vector<int64_t>{r - 2, r - 1}},
                               {"starts", std::vector<int64_t>{0, 0}},
                               {"ends", std::vector<int64_t>{m, n_}}},
                              name, {name});
    if (!sliced.ok()) return sliced.status();
    rw_.SetMap(out, (*sliced)[0]);
    return absl::OkStatus();
  }

  /// Old value `v` (rank `rank`) mapped, with zeros after its end on the given (axis, count)
  /// pairs; the mapped value itself when every count is 0.
  absl::StatusOr<int> Pad(int v, size_t rank, const std::vector<std::pair<size_t, int64_t>>& by,
                          const std::string& hint) {
    std::vector<int64_t> paddings(2 * rank, 0);
    bool any = false;
    for (const auto& [axis, count] : by) {
      paddings[2 * axis + 1] += count;
      any |= count > 0;
    }
    if (!any) return rw_.Map(v);
    auto padded = rw_.AddNode("pad", {rw_.Map(v)}, {{"paddings", paddings}, {"value", 0.0}}, hint);
    if (!padded.ok()) return padded.status();
    return (*padded)[0];
  }

  const Graph& graph_;
  GraphRewriter rw_;
};

}  // namespace

absl::StatusOr<Graph> PadMatmulsForAlignment(const Graph& graph) { return Padder(graph).Run(); }

}  // namespace cinn_like::hlir
