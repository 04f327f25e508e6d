/// \file Copies of shared cheap values into each fusion group that reads them.
#include "hlir/pass/recompute_shared.h"

#include <map>
#include <set>
#include <utility>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

bool Fusible(OpPattern p) {
  return p == OpPattern::kElementwise || p == OpPattern::kBroadcast || p == OpPattern::kInjective;
}

/// A value's size in units that compare: bytes when its shape is static; for a symbolic shape,
/// the output's bytes when it has the output's shape, else as much (never assumed smaller).
double Bytes(const TensorDesc& d, const TensorDesc& out, double out_bytes) {
  if (!IsStatic(d.shape))
    return d.shape == out.shape ? out_bytes * DTypeBits(d.dtype) / DTypeBits(out.dtype) : out_bytes;
  return static_cast<double>(NumElements(d.shape)) * DTypeBits(d.dtype) / 8;
}

class Picker {
 public:
  explicit Picker(const FusedGraph& fused)
      : graph_(fused.graph), consumers_(ValueConsumers(fused.graph)) {
    group_of_.assign(graph_.nodes().size(), -1);
    for (int g = 0; g < static_cast<int>(fused.groups.size()); ++g) {
      for (int n : fused.groups[g].nodes) group_of_[n] = g;
    }
    for (const Node& n : graph_.nodes()) def_.push_back(*OpRegistry::Global().Find(n.op));
  }

  /// Per picked node, the groups that read its output (directly, or through copies of picked
  /// readers); from the last node back, so a node's readers are decided before it.
  std::map<int, std::set<int>> Pick() {
    std::map<int, std::set<int>> picked;
    for (int n = static_cast<int>(graph_.nodes().size()) - 1; n >= 0; --n) {
      auto groups = ReadingGroups(n, picked);
      if (groups) picked.emplace(n, std::move(*groups));
    }
    return picked;
  }

  const std::vector<int>& group_of() const { return group_of_; }

 private:
  std::optional<std::set<int>> ReadingGroups(int n, const std::map<int, std::set<int>>& picked) {
    const Node& node = graph_.nodes()[n];
    const OpDef& def = *def_[n];
    if (!Fusible(def.pattern) || def.compile_time_value || node.outputs.size() != 1) {
      return std::nullopt;
    }
    const int v = node.outputs[0];
    if (IsGraphOutput(graph_, v)) return std::nullopt;
    std::set<int> groups;  // a picked reader's copies read it in their groups
    for (int c : consumers_[v]) {
      const OpPattern p = def_[c]->pattern;
      if (!Fusible(p) && p != OpPattern::kReduction) return std::nullopt;
      auto copies = picked.find(c);
      if (copies == picked.end()) {
        groups.insert(group_of_[c]);
      } else {
        groups.insert(copies->second.begin(), copies->second.end());
      }
    }
    if (groups.size() < 2) return std::nullopt;
    const TensorDesc& out = graph_.values()[v].desc;
    const double out_bytes = Bytes(out, out, 1.0);
    // What the copies load: the stored values it reads. An input a cheap node of its own group
    // computes is computed in the copies too (that node is picked after it, or is stored and
    // read, as this one was); compile-time values are literals in the reader. A cheap value of
    // another group is refused: its group may be copied too, and copies of copies would chain
    // recomputation from group to group (a residual stream summed again in every layer).
    double in_bytes = 0;
    for (int in : std::set<int>(node.inputs.begin(), node.inputs.end())) {
      const int p = graph_.values()[in].producer;
      if (p >= 0 && def_[p]->compile_time_value) continue;
      if (p >= 0 && Fusible(def_[p]->pattern)) {
        if (group_of_[p] != group_of_[n]) return std::nullopt;
        continue;
      }
      in_bytes += Bytes(graph_.values()[in].desc, out, out_bytes);
    }
    const double k = static_cast<double>(groups.size());
    if (in_bytes * (k - 1) > out_bytes * (k + 1)) return std::nullopt;
    return groups;
  }

  const Graph& graph_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> group_of_;
  std::vector<const OpDef*> def_;
};

}  // namespace

absl::StatusOr<std::optional<Graph>> CopySharedValues(const FusedGraph& fused, int max_nodes) {
  Picker picker(fused);
  const std::map<int, std::set<int>> picked = picker.Pick();
  if (picked.empty()) return std::optional<Graph>();
  int added = 0;
  for (const auto& [n, groups] : picked) added += static_cast<int>(groups.size()) - 1;
  const Graph& graph = fused.graph;
  if (static_cast<int>(graph.nodes().size()) + added > max_nodes) return std::optional<Graph>();
  const std::vector<int>& group_of = picker.group_of();
  GraphRewriter rw(graph);
  std::map<std::pair<int, int>, int> copy;  // (old value, reading group) -> new value
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    // Node n's inputs as read in group g: a picked producer's copy there, else the value.
    bool reads_copy = false;
    auto inputs_in = [&](int g) {
      std::vector<int> inputs;
      for (int v : node.inputs) {
        auto it = copy.find({v, g});
        reads_copy = reads_copy || it != copy.end();
        inputs.push_back(it != copy.end() ? it->second : rw.Map(v));
      }
      return inputs;
    };
    auto found = picked.find(n);
    if (found != picked.end()) {
      const int v = node.outputs[0];
      const std::string& name = graph.values()[v].name;
      for (int g : found->second) {
        auto made = rw.AddNode(node.op, inputs_in(g), node.attrs, name + "_in_group");
        if (!made.ok()) return made.status();
        copy[{v, g}] = (*made)[0];
      }
      continue;
    }
    const std::vector<int> inputs = inputs_in(group_of[n]);
    if (!reads_copy) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    std::vector<std::string> names;
    for (int v : node.outputs) names.push_back(graph.values()[v].name);
    auto made = rw.AddNode(node.op, inputs, node.attrs, node.op, names);
    if (!made.ok()) return made.status();
    for (size_t i = 0; i < made->size(); ++i) rw.SetMap(node.outputs[i], (*made)[i]);
  }
  auto out = rw.Finish();
  if (!out.ok()) return out.status();
  return std::optional<Graph>(*std::move(out));
}

absl::StatusOr<FusedGraph> FuseRecomputingSharedValues(Graph graph, const FusionOptions& options) {
  const int max_nodes = 2 * static_cast<int>(graph.nodes().size());
  FusedGraph fused = FuseOperators(std::move(graph), options);
  if (!options.enabled) return fused;
  auto copied = CopySharedValues(fused, max_nodes);
  if (!copied.ok()) return copied.status();
  if (!copied->has_value()) return fused;
  return FuseOperators(**std::move(copied), options);
}

}  // namespace cinn_like::hlir
