/// \file Copies of shared cheap values into each fusion group that reads them.
#include "hlir/pass/recompute_shared.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

bool Fusible(OpPattern p) {
  return p == OpPattern::kElementwise || p == OpPattern::kBroadcast || p == OpPattern::kInjective;
}

/// A symbolic dim's nominal extent when sizes are compared (every symbol alike).
constexpr double kNominalSymbolicExtent = 1024;

/// A reduction's epilogue whose value and new stores are at most this many bytes is copied into
/// its readers whatever the bytes say (WorthCopying).
constexpr double kTinyBytes = 16 << 10;

/// A chain that gathers (reads by computed indices) is stored, not copied, where a reader
/// evaluates it on at least this many times its elements (WorthCopying).
constexpr int64_t kGatherBroadcastFactor = 4;

/// A value's bytes, a symbolic dim counted at kNominalSymbolicExtent, so that static and
/// symbolic sizes compare in one unit.
double Bytes(const TensorDesc& d) {
  double n = static_cast<double>(DTypeBits(d.dtype)) / 8;
  for (const Dim& dim : d.shape) {
    n *= dim.is_symbolic() ? kNominalSymbolicExtent : static_cast<double>(dim.value);
  }
  return n;
}

class Picker {
 public:
  explicit Picker(const FusedGraph& fused)
      : graph_(fused.graph),
        consumers_(ValueConsumers(fused.graph)),
        group_of_(GroupOfNodes(fused.groups, fused.graph.nodes().size())),
        is_output_(fused.graph.values().size(), false) {
    for (const Node& n : graph_.nodes()) def_.push_back(*OpRegistry::Global().Find(n.op));
    for (int v : graph_.outputs()) is_output_[v] = true;
  }

  /// Per picked node, the groups that read its output (directly or through copies of picked
  /// readers). Nodes are picked by their shape in the graph (Candidates); then each chain's
  /// top (a picked node no picked node reads) is weighed with what its copies load, and a top
  /// that loads too much is refused and the choice made again without it (its producers were
  /// picked only for its copies).
  std::map<int, std::set<int>> Pick(std::set<int> refused) {
    for (;;) {
      std::map<int, std::set<int>> picked = Candidates(refused);
      const size_t before = refused.size();
      for (const auto& [n, groups] : picked) {
        if (IsTop(n, picked) && !WorthCopying(n, groups.size(), picked)) refused.insert(n);
      }
      if (refused.size() == before) return picked;
    }
  }

  const std::vector<int>& group_of() const { return group_of_; }

 private:
  /// From the last node back (a node's readers are decided before it): cheap single-output
  /// nodes, not refused, no graph output, read only by cheap nodes or reductions of two or more
  /// groups (counting a picked reader's copies' groups), that read no cheap value of another
  /// group (its group may be copied too, and copies of copies would carry recomputation from
  /// group to group: a residual stream summed again in every layer).
  std::map<int, std::set<int>> Candidates(const std::set<int>& refused) const {
    std::map<int, std::set<int>> picked;
    for (int n = static_cast<int>(graph_.nodes().size()) - 1; n >= 0; --n) {
      const Node& node = graph_.nodes()[n];
      const OpDef& def = *def_[n];
      if (refused.count(n) || !Fusible(def.pattern) || def.compile_time_value ||
          node.outputs.size() != 1 || is_output_[node.outputs[0]]) {
        continue;
      }
      std::set<int> groups;
      bool ok = true;
      for (int c : consumers_[node.outputs[0]]) {
        const OpPattern p = def_[c]->pattern;
        ok = ok && (Fusible(p) || p == OpPattern::kReduction);
        auto copies = picked.find(c);
        if (copies == picked.end()) {
          groups.insert(group_of_[c]);
        } else {
          groups.insert(copies->second.begin(), copies->second.end());
        }
      }
      for (int in : node.inputs) {
        const int p = graph_.values()[in].producer;
        ok = ok && (p < 0 || def_[p]->compile_time_value || !Fusible(def_[p]->pattern) ||
                    group_of_[p] == group_of_[n]);
      }
      if (ok && groups.size() >= 2) picked.emplace(n, std::move(groups));
    }
    return picked;
  }

  bool IsTop(int n, const std::map<int, std::set<int>>& picked) const {
    for (int c : consumers_[graph_.nodes()[n].outputs[0]]) {
      if (picked.count(c)) return false;
    }
    return true;
  }

  /// The stored values the copies of `n` load: its inputs, through picked producers (copied
  /// with it, gathered in `chain`) to what is stored (graph inputs, reductions, library
  /// results, cheap values not picked); compile-time values are literals in the reader. Those
  /// a node of the chain's own group made and no other group read were not stored before (a
  /// reduction of the group, a cheap value not picked): they go in `stores` too.
  void Loads(int n, const std::map<int, std::set<int>>& picked, std::set<int>* loads,
             std::set<int>* stores, std::set<int>* chain) const {
    if (!chain->insert(n).second) return;
    for (int in : graph_.nodes()[n].inputs) {
      const int p = graph_.values()[in].producer;
      if (p >= 0 && def_[p]->compile_time_value) continue;
      if (p >= 0 && picked.count(p)) {
        Loads(p, picked, loads, stores, chain);
        continue;
      }
      loads->insert(in);
      if (p >= 0 && group_of_[p] == group_of_[n] && !StoredBefore(in)) stores->insert(in);
    }
  }

  /// Whether value `v` was stored before any copy: a graph output, or read by a node of
  /// another group than its producer's.
  bool StoredBefore(int v) const {
    if (is_output_[v]) return true;
    const int p = graph_.values()[v].producer;
    for (int c : consumers_[v]) {
      if (group_of_[c] != group_of_[p]) return true;
    }
    return false;
  }

  /// Whether copying the chain topped by `n` into its `k` reading groups is short enough (at most
  /// kMaxCopiedChain nodes) and moves no more bytes than storing n would: the copies load the
  /// chain's stored values k times where n's group loaded them once, and store and load k times
  /// what the copies make stored anew, against n's store and its k loads saved:
  /// loads * (k - 1) + stores * (k + 1) <= out * (k + 1).
  bool WorthCopying(int n, size_t k, const std::map<int, std::set<int>>& picked) const {
    std::set<int> loads, stores, chain;
    Loads(n, picked, &loads, &stores, &chain);
    if (static_cast<int>(chain.size()) > kMaxCopiedChain) return false;
    double load_bytes = 0, store_bytes = 0;
    for (int v : loads) load_bytes += Bytes(graph_.values()[v].desc);
    for (int v : stores) store_bytes += Bytes(graph_.values()[v].desc);
    const double copies = static_cast<double>(k);
    const double out = Bytes(graph_.values()[graph_.nodes()[n].outputs[0]].desc);
    // A small epilogue of its own group's reductions (a BatchNorm's variance: the sum of
    // squares over n, [C]), stored, is mostly a kernel of its own after the reduction's (not
    // where the reduction is computed in its readers' rows); copied into its readers, the
    // reduction's kernel stores what they read. Bytes this few cost nothing next to the launch
    // saved. Static sizes only: a symbolic dim's nominal extent says nothing of its bytes.
    const int top = graph_.nodes()[n].outputs[0];
    if (GathersForWiderReaders(top, chain)) return false;
    if (out <= kTinyBytes && store_bytes <= kTinyBytes && ReadsOwnReductionsOnly(n, loads) &&
        IsStatic(top) &&
        std::all_of(loads.begin(), loads.end(), [&](int v) { return IsStatic(v); }) &&
        std::all_of(stores.begin(), stores.end(), [&](int v) { return IsStatic(v); })) {
      return true;
    }
    return load_bytes * (copies - 1) + store_bytes * (copies + 1) <= out * (copies + 1);
  }

  /// Whether the chain `chain` topped by value `top` gathers and a reader of `top` computes at
  /// least kGatherBroadcastFactor times top's elements: each copy would gather per element of
  /// its reader. HF's padding and causal masks ([B, 1, S, S], the mask and the positions
  /// gathered by index) were copied into every layer's softmax over [B, H, S, S]: a Llama
  /// layer's softmax took 445 us on an H200 where the scores alone take some 130; stored once,
  /// each layer reads the mask instead (broadcast over the heads).
  bool GathersForWiderReaders(int top, const std::set<int>& chain) const {
    const bool gathers = std::any_of(chain.begin(), chain.end(),
                                     [&](int c) { return graph_.nodes()[c].op == "gather"; });
    if (!gathers || !IsStatic(top)) return false;
    const int64_t own = NumElements(graph_.values()[top].desc.shape);
    for (int c : consumers_[top]) {
      for (int o : graph_.nodes()[c].outputs) {
        if (IsStatic(o) &&
            NumElements(graph_.values()[o].desc.shape) >= kGatherBroadcastFactor * own) {
          return true;
        }
      }
    }
    return false;
  }

  bool IsStatic(int v) const {
    const Shape& shape = graph_.values()[v].desc.shape;
    return std::none_of(shape.begin(), shape.end(), [](const Dim& d) { return d.is_symbolic(); });
  }

  /// Whether every value of `loads` (what the chain topped by `n` loads) is made by a
  /// reduction of n's own group.
  bool ReadsOwnReductionsOnly(int n, const std::set<int>& loads) const {
    for (int v : loads) {
      const int p = graph_.values()[v].producer;
      if (p < 0 || def_[p]->pattern != OpPattern::kReduction || group_of_[p] != group_of_[n]) {
        return false;
      }
    }
    return !loads.empty();
  }

  const Graph& graph_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> group_of_;
  std::vector<bool> is_output_;  // by value: made once (IsGraphOutput scans the outputs)
  std::vector<const OpDef*> def_;
};

/// The nodes (of the graph before copying) whose copies `again` stores: read by a group other
/// than the copy's own (its readers of one old group fell apart when fusing again).
std::set<int> StoredCopies(const FusedGraph& again, const std::map<int, int>& copied_from) {
  const std::vector<int> group_of = GroupOfNodes(again.groups, again.graph.nodes().size());
  const auto consumers = ValueConsumers(again.graph);
  std::set<int> stored;
  for (const auto& [v, old] : copied_from) {
    const int producer = again.graph.values()[v].producer;
    for (int c : consumers[v]) {
      if (group_of[c] != group_of[producer]) stored.insert(old);
    }
  }
  return stored;
}

}  // namespace

absl::StatusOr<std::optional<SharedCopies>> CopySharedValues(const FusedGraph& fused, int max_nodes,
                                                             const std::set<int>& refused) {
  Picker picker(fused);
  const std::map<int, std::set<int>> picked = picker.Pick(refused);
  if (picked.empty()) return std::optional<SharedCopies>();
  int added = 0;
  for (const auto& [n, groups] : picked) added += static_cast<int>(groups.size()) - 1;
  const Graph& graph = fused.graph;
  if (static_cast<int>(graph.nodes().size()) + added > max_nodes) {
    return std::optional<SharedCopies>();
  }
  const std::vector<int>& group_of = picker.group_of();
  GraphRewriter rw(graph);
  std::map<std::pair<int, int>, int> copy;  // (old value, reading group) -> new value
  std::map<int, int> copied_from;           // new value of a copy -> the node it copies
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
        copied_from[(*made)[0]] = n;
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
  return std::optional<SharedCopies>(SharedCopies{*std::move(out), std::move(copied_from)});
}

absl::StatusOr<FusedGraph> FuseRecomputingSharedValues(Graph graph, const FusionOptions& options) {
  const int max_nodes = 2 * static_cast<int>(graph.nodes().size());
  FusedGraph fused = FuseOperators(std::move(graph), options);
  if (!options.enabled) return fused;
  std::set<int> refused;
  for (int attempt = 0; attempt < kMaxCopyAttempts; ++attempt) {
    auto copied = CopySharedValues(fused, max_nodes, refused);
    if (!copied.ok()) return copied.status();
    if (!copied->has_value()) return fused;
    FusedGraph again = FuseOperators((*copied)->graph, options);
    const std::set<int> stored = StoredCopies(again, (*copied)->copied_from);
    if (stored.empty()) return again;
    refused.insert(stored.begin(), stored.end());
  }
  return fused;
}

}  // namespace cinn_like::hlir
