/// \file Reshape simplification, through the graph rewriter.
#include "hlir/pass/simplify_reshapes.h"

#include <optional>
#include <set>

#include "hlir/op.h"
#include "hlir/pass/dead_code_elimination.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// The reductions whose value over one element is that element, and whose result over several
/// does not depend on keepdim but for its shape.
const std::set<std::string>& PlainReductions() {
  static const std::set<std::string> ops = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                                            "reduce_prod"};
  return ops;
}

/// Whether node `node` is a reduction of one element per result (every reduce axis of static
/// extent 1) whose result keeps its input's dtype: a reshape of its input.
bool ReducesSingleElements(const Graph& graph, const Node& node) {
  if (!PlainReductions().count(node.op)) return false;
  const TensorDesc& in = graph.values()[node.inputs[0]].desc;
  if (in.dtype != graph.values()[node.outputs[0]].desc.dtype) return false;
  auto def = OpRegistry::Global().Find(node.op);
  if (!def.ok() || !(*def)->reduce_axes) return false;
  auto axes = (*def)->reduce_axes({in}, node.attrs);
  if (!axes.ok() || axes->empty()) return false;
  for (int a : *axes) {
    if (!in.shape[a].is_one()) return false;
  }
  return true;
}

/// For reshape node `node`: the reduction it only drops the kept dims of (reduce(x, keepdim)
/// whose one reader is the reshape, to the shape the reduction has without keepdim), as the
/// attributes of that reduction without keepdim; none otherwise.
std::optional<AttributeMap> DropsKeptDims(const Graph& graph,
                                          const std::vector<std::vector<int>>& consumers,
                                          const Node& node) {
  const int reduced = node.inputs[0];
  const int p = graph.values()[reduced].producer;
  if (p < 0 || !PlainReductions().count(graph.nodes()[p].op) || consumers[reduced].size() != 1 ||
      IsGraphOutput(graph, reduced)) {
    return std::nullopt;
  }
  const Node& reduce = graph.nodes()[p];
  auto keepdim = GetBool(reduce.attrs, "keepdim", reduce.op, false);
  if (!keepdim.ok() || !*keepdim) return std::nullopt;
  AttributeMap attrs = reduce.attrs;
  attrs["keepdim"] = false;
  auto out = OpRegistry::Global().Infer(reduce.op, {graph.values()[reduce.inputs[0]].desc}, attrs);
  if (!out.ok() || (*out)[0].shape != graph.values()[node.outputs[0]].desc.shape) {
    return std::nullopt;
  }
  return attrs;
}

/// Whether new value `v` is read, through every old value that stands for it (identity
/// reshapes dropped before map to their input), by old node `reader` alone, and none of those
/// old values is a graph output.
bool ReadOnlyBy(const Graph& graph, const GraphRewriter& rw,
                const std::vector<std::vector<int>>& consumers, int v, int reader) {
  int readers = 0;
  for (int u = 0; u < static_cast<int>(graph.values().size()); ++u) {
    if (rw.Map(u) != v) continue;
    if (IsGraphOutput(graph, u)) return false;
    for (int c : consumers[u]) {
      if (c != reader) return false;
      ++readers;
    }
  }
  return readers == 1;
}

/// Whether node `node` is a broadcast_to to the shape its input already has: a reshape to it
/// (a traced matmul expands each operand to the shape it has before viewing it as a batch).
bool BroadcastsToItsOwnShape(const Graph& graph, const Node& node) {
  return node.op == "broadcast_to" &&
         graph.values()[node.inputs[0]].desc.shape == graph.values()[node.outputs[0]].desc.shape;
}

}  // namespace

absl::StatusOr<Graph> SimplifyReshapes(const Graph& input) {
  // Readers that reach no output do not count (autocast leaves a bias gradient's cast to
  // bfloat16 unread beside the output's view of it).
  absl::StatusOr<Graph> live = EliminateDeadCode(input);
  if (!live.ok()) return live.status();
  const Graph& graph = *live;
  GraphRewriter rw(graph);
  const std::vector<std::vector<int>> consumers = ValueConsumers(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    if (node.op == "cast") {
      // cast(reshape(x)) -> reshape(cast(x)) where the cast is the reshape's one reader.
      const int r = graph.values()[node.inputs[0]].producer;
      const int reshaped = node.inputs[0];
      if (r >= 0 && graph.nodes()[r].op == "reshape" && consumers[reshaped].size() == 1 &&
          !IsGraphOutput(graph, reshaped) &&
          graph.values()[graph.nodes()[r].inputs[0]].desc.shape !=
              graph.values()[reshaped].desc.shape) {
        const std::string& name = graph.values()[node.outputs[0]].name;
        auto cast = rw.AddNode("cast", {rw.Map(graph.nodes()[r].inputs[0])}, node.attrs, name);
        if (!cast.ok()) return cast.status();
        auto made = rw.AddNode("reshape", {(*cast)[0]}, graph.nodes()[r].attrs, name, {name});
        if (!made.ok()) return made.status();
        rw.SetMap(node.outputs[0], (*made)[0]);
        continue;
      }
    }
    if (ReducesSingleElements(graph, node)) {
      // A reduction over axes of extent 1 (a scatter's decomposition reduces its index axis
      // of one) moves no element: as a reshape it fuses as injective work, not a reduction.
      const std::string& name = graph.values()[node.outputs[0]].name;
      AttributeMap attrs = {{"shape", graph.values()[node.outputs[0]].desc.shape}};
      auto made = rw.AddNode("reshape", {rw.Map(node.inputs[0])}, attrs, name, {name});
      if (!made.ok()) return made.status();
      rw.SetMap(node.outputs[0], (*made)[0]);
      continue;
    }
    if (node.op != "reshape" && !BroadcastsToItsOwnShape(graph, node)) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    if (auto attrs = DropsKeptDims(graph, consumers, node)) {
      // reshape(reduce(x, keepdim)) dropping the kept dims: the reduction without keepdim (a
      // parameter's gradient summed to [1, n] and viewed as [n] was a copy kernel of its own
      // after the reduction's, the view being a graph output). The reduction copied before is
      // left unread, for dead-code elimination.
      const Node& reduce = graph.nodes()[graph.values()[node.inputs[0]].producer];
      const std::string& name = graph.values()[node.outputs[0]].name;
      auto made = rw.AddNode(reduce.op, {rw.Map(reduce.inputs[0])}, *attrs, name, {name});
      if (!made.ok()) return made.status();
      rw.SetMap(node.outputs[0], (*made)[0]);
      continue;
    }
    // The value this reshape reshapes, in the new graph: past a reshape that produced it.
    const int in = rw.Map(node.inputs[0]), out = node.outputs[0];
    int source = in;
    const int producer = rw.new_graph().values()[in].producer;
    if (producer >= 0 && rw.new_graph().nodes()[producer].op == "reshape") {
      source = rw.new_graph().nodes()[producer].inputs[0];
    }
    const Shape& shape = graph.values()[out].desc.shape;
    const bool same = rw.new_graph().values()[source].desc.shape == shape;
    if (same && !IsGraphOutput(graph, out)) {
      rw.SetMap(out, source);
    } else if (same && source == in && producer >= 0 && ReadOnlyBy(graph, rw, consumers, in, n) &&
               rw.new_graph().nodes()[producer].outputs.size() == 1) {
      // A graph output that only renames what one node computes for it alone (a bias
      // gradient's sum viewed as itself: a copy kernel after the sum's): that node, named as
      // the output; the one copied before is left unread, for dead-code elimination.
      const Node made_by = rw.new_graph().nodes()[producer];
      const std::string& name = graph.values()[out].name;
      auto made = rw.AddNode(made_by.op, made_by.inputs, made_by.attrs, name, {name});
      if (!made.ok()) return made.status();
      rw.SetMap(out, (*made)[0]);
    } else if (source != in) {
      const std::string& name = graph.values()[out].name;
      auto made = rw.AddNode("reshape", {source}, {{"shape", shape}}, name, {name});
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
