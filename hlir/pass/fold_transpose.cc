/// \file Transpose folding into matmul operands, through the graph rewriter.
#include "hlir/pass/fold_transpose.h"

#include <optional>
#include <utility>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// Whether `node` is a transpose swapping the last two of its input's dims, others in place.
bool SwapsLastTwo(const Graph& graph, const Node& node) {
  if (node.op != "transpose" || node.inputs.size() != 1) return false;
  auto perm = GetInts(node.attrs, "perm", "transpose", {});
  const size_t rank = graph.values()[node.inputs[0]].desc.shape.size();
  if (!perm.ok() || rank < 2 || perm->size() != rank) return false;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if ((*perm)[d] != static_cast<int64_t>(d)) return false;
  }
  return (*perm)[rank - 2] == static_cast<int64_t>(rank - 1) &&
         (*perm)[rank - 1] == static_cast<int64_t>(rank - 2);
}

/// A matmul operand that is transpose(a, perm), or a reshape of one merging its leading dims
/// into one batch dim, where perm's second-to-last entry is a's innermost dim (a transposed
/// copy would read a across its rows): the transpose and reshape, each read by nothing else.
struct AcrossRows {
  const Node* transpose = nullptr;
  const Node* reshape = nullptr;  // null: the matmul reads the transpose itself
};

std::optional<AcrossRows> ReadsAcrossRows(const Graph& graph,
                                          const std::vector<std::vector<int>>& consumers,
                                          const std::vector<int>& producer, int v) {
  AcrossRows r;
  int p = producer[v];
  if (p < 0) return std::nullopt;
  if (graph.nodes()[p].op == "reshape") {
    if (consumers[v].size() != 1 || IsGraphOutput(graph, v)) return std::nullopt;
    r.reshape = &graph.nodes()[p];
    v = r.reshape->inputs[0];
    p = producer[v];
    if (p < 0) return std::nullopt;
  }
  const Node& t = graph.nodes()[p];
  if (t.op != "transpose" || t.inputs.size() != 1 || consumers[v].size() != 1 ||
      IsGraphOutput(graph, v)) {
    return std::nullopt;
  }
  auto perm = GetInts(t.attrs, "perm", "transpose", {});
  const Shape& out = graph.values()[v].desc.shape;
  const size_t rank = out.size();
  if (!perm.ok() || rank < 3 || perm->size() != rank ||
      (*perm)[rank - 2] != static_cast<int64_t>(rank - 1)) {
    return std::nullopt;
  }
  if (r.reshape) {
    // [d0, ..., d(r-3), m, n] -> [d0 * ... * d(r-3), m, n]: the batch dims merged, in order.
    const Shape& merged = graph.values()[r.reshape->outputs[0]].desc.shape;
    if (merged.size() != 3 || merged[1] != out[rank - 2] || merged[2] != out[rank - 1]) {
      return std::nullopt;
    }
    const Shape lead(out.begin(), out.end() - 2);
    if (!(ElementCount(lead) == ElementCount({merged[0]}))) return std::nullopt;
  }
  r.transpose = &t;
  return r;
}

}  // namespace

absl::StatusOr<Graph> FoldTransposeIntoMatmul(const Graph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes().size());
  std::vector<int> producer(graph.values().size(), -1);
  for (int n = 0; n < num_nodes; ++n) {
    for (int v : graph.nodes()[n].outputs) producer[v] = n;
  }
  GraphRewriter rw(graph);
  const std::vector<std::vector<int>> consumers = ValueConsumers(graph);
  for (int n = 0; n < num_nodes; ++n) {
    const Node& node = graph.nodes()[n];
    bool folded = false;
    std::vector<int> inputs;
    AttributeMap attrs = node.attrs;
    if (node.op == "matmul" && node.inputs.size() == 2) {
      const char* flags[] = {"transpose_x", "transpose_y"};
      int across_x = -1;  // x's new operand where x was read across its rows
      for (int k = 0; k < 2; ++k) {
        int v = node.inputs[k];
        const int p = producer[v];
        auto flag = GetBool(node.attrs, flags[k], "matmul", false);
        if (!flag.ok()) return flag.status();
        if (p >= 0 && SwapsLastTwo(graph, graph.nodes()[p])) {
          attrs[flags[k]] = !*flag;
          v = graph.nodes()[p].inputs[0];
          folded = true;
        } else if (k == 1 && v == node.inputs[0] && across_x >= 0) {
          // matmul(t, t): the operand rewritten for x, read transposed as y as well.
          attrs[flags[k]] = !*flag;
          inputs.push_back(across_x);
          continue;
        } else if (auto across = ReadsAcrossRows(graph, consumers, producer, v)) {
          // The transpose with its last two dims swapped keeps a's innermost dim innermost
          // (whole rows copied, or no copy at all), and the matmul reads it transposed: HF's
          // eager attention's key, [B, S, H, D] to [B, H, D, S], was a transposed copy
          // reading each head's rows across (GPT-2's fused qkv: 170 us a layer on an H200).
          std::vector<int64_t> perm = *GetInts(across->transpose->attrs, "perm", "transpose", {});
          std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
          const int a = across->transpose->inputs[0];
          const std::string& tname = graph.values()[across->transpose->outputs[0]].name;
          bool identity = true;
          for (size_t d = 0; d < perm.size(); ++d) identity &= perm[d] == static_cast<int64_t>(d);
          int operand = rw.Map(a);
          if (!identity) {
            auto swapped = rw.AddNode("transpose", {operand}, {{"perm", perm}}, tname);
            if (!swapped.ok()) return swapped.status();
            operand = (*swapped)[0];
          }
          if (across->reshape) {
            Shape merged = graph.values()[across->reshape->outputs[0]].desc.shape;
            std::swap(merged[1], merged[2]);
            auto viewed = rw.AddNode("reshape", {operand}, {{"shape", merged}},
                                     graph.values()[across->reshape->outputs[0]].name);
            if (!viewed.ok()) return viewed.status();
            operand = (*viewed)[0];
          }
          attrs[flags[k]] = !*flag;
          inputs.push_back(operand);
          if (k == 0) across_x = operand;
          folded = true;
          continue;
        }
        inputs.push_back(rw.Map(v));
      }
    }
    if (!folded) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    const std::string& name = graph.values()[node.outputs[0]].name;
    auto outs = rw.AddNode("matmul", inputs, attrs, name, {name});
    if (!outs.ok()) return outs.status();
    rw.SetMap(node.outputs[0], (*outs)[0]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
