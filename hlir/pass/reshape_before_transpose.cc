/// \file Reshapes moved before transposes, through the graph rewriter.
#include "hlir/pass/reshape_before_transpose.h"

#include <optional>
#include <string>
#include <vector>

#include "hlir/attribute.h"
#include "hlir/pass/graph_rewriter.h"
#include "hlir/shape.h"

namespace cinn_like::hlir {
namespace {

/// reshape(transpose(x, perm), out) as transpose(reshape(x, split), split_perm), where the
/// transpose's result has dims `t`.
struct Rewrite {
  std::vector<int64_t> split;       // x's dims, each split as its transposed dim is in out
  std::vector<int64_t> split_perm;  // of the split x, giving out
};

/// The rewrite; none when `out` is not `t` with each dim split into consecutive dims (ones
/// anywhere: a dim of extent 1 in t takes none of out's, a one in out goes with the dim after
/// it, trailing ones with the last).
std::optional<Rewrite> Plan(const std::vector<int64_t>& perm, const std::vector<int64_t>& t,
                            const std::vector<int64_t>& out) {
  const size_t rank = t.size();
  std::vector<size_t> first;  // group j is out[first[j] .. first[j + 1])
  size_t k = 0;
  for (int64_t extent : t) {
    first.push_back(k);
    int64_t product = 1;
    while (k < out.size() && product < extent) product *= out[k++];
    if (product != extent) return std::nullopt;
  }
  while (k < out.size() && out[k] == 1) ++k;
  if (k != out.size()) return std::nullopt;
  first.push_back(out.size());
  // x's dim i is t's dim j where perm[j] == i; in the split x, its dims start at start[i].
  std::vector<size_t> transposed(rank), start(rank);
  for (size_t j = 0; j < rank; ++j) transposed[static_cast<size_t>(perm[j])] = j;
  Rewrite r;
  for (size_t i = 0; i < rank; ++i) {
    const size_t j = transposed[i];
    start[i] = r.split.size();
    for (size_t d = first[j]; d < first[j + 1]; ++d) r.split.push_back(out[d]);
  }
  for (size_t j = 0; j < rank; ++j) {
    const size_t i = static_cast<size_t>(perm[j]);
    for (size_t d = 0; d < first[j + 1] - first[j]; ++d) {
      r.split_perm.push_back(static_cast<int64_t>(start[i] + d));
    }
  }
  return r;
}

}  // namespace

absl::StatusOr<Graph> MoveReshapesBeforeTransposes(const Graph& graph) {
  const std::vector<std::vector<int>> readers = ValueConsumers(graph);
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    std::optional<Rewrite> plan;
    int x = -1;
    if (node.op == "reshape" && node.inputs.size() == 1 && node.outputs.size() == 1) {
      const int t = node.inputs[0], p = graph.values()[t].producer;
      const Shape& out = graph.values()[node.outputs[0]].desc.shape;
      const Shape& mid = graph.values()[t].desc.shape;
      if (p >= 0 && graph.nodes()[p].op == "transpose" && readers[t].size() == 1 &&
          !IsGraphOutput(graph, t) && IsStatic(out) && IsStatic(mid) && out != mid) {
        auto perm = GetInts(graph.nodes()[p].attrs, "perm", "transpose");
        x = graph.nodes()[p].inputs[0];
        if (perm.ok() && perm->size() == mid.size()) {
          std::vector<int64_t> pos = *perm;
          for (int64_t& a : pos) a = a < 0 ? a + static_cast<int64_t>(mid.size()) : a;
          plan = Plan(pos, StaticDims(mid), StaticDims(out));
        }
      }
    }
    if (!plan) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    const std::string& name = graph.values()[node.outputs[0]].name;
    auto split = rw.AddNode("reshape", {rw.Map(x)}, {{"shape", plan->split}}, name + "_split");
    if (!split.ok()) return split.status();
    auto moved = rw.AddNode("transpose", {(*split)[0]}, {{"perm", plan->split_perm}}, name, {name});
    if (!moved.ok()) return moved.status();
    rw.SetMap(node.outputs[0], (*moved)[0]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
