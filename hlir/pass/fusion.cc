/// \file Operator fusion: producers join their consumers' group, from the last node back.
#include "hlir/pass/fusion.h"

#include <glog/logging.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// What a reduction reduces: its (first) input's shape and the reduced axes (OpDef::
/// reduce_axes), or nothing for an op that declares none (which then fuses with no other
/// reduction).
using ReduceKey = std::pair<Shape, std::vector<int>>;
std::optional<ReduceKey> ReductionKey(const Graph& graph, const Node& node, const OpDef& def) {
  if (node.inputs.empty() || !def.reduce_axes) return std::nullopt;
  std::vector<TensorDesc> inputs;
  for (int v : node.inputs) inputs.push_back(graph.values()[v].desc);
  auto axes = def.reduce_axes(inputs, node.attrs);
  if (!axes.ok()) return std::nullopt;
  return ReduceKey{inputs[0].shape, *axes};
}

class Fuser {
 public:
  Fuser(const Graph& graph, const FusionOptions& options)
      : graph_(graph), options_(options), consumers_(ValueConsumers(graph)) {
    for (const Node& n : graph.nodes()) {
      def_.push_back(*OpRegistry::Global().Find(n.op));
      pattern_.push_back(def_.back()->pattern);
    }
  }

  std::vector<FusionGroup> Run() {
    const int num_nodes = static_cast<int>(graph_.nodes().size());
    group_of_.assign(num_nodes, -1);
    for (int n = num_nodes - 1; n >= 0; --n) {
      int target = options_.enabled ? JoinableGroup(n) : -1;
      if (target < 0) {
        target = static_cast<int>(members_.size());
        members_.emplace_back();
      }
      members_[target].push_back(n);
      group_of_[n] = target;
    }
    std::vector<FusionGroup> groups;
    for (auto& m : members_) groups.push_back(Describe(m));
    // A group's last node is the one that started it. Only it feeds other groups, or a node
    // that joined the earliest of its readers' groups (StoredValueGroup), which none of the
    // others feeds: ordering by last node puts producers first.
    std::sort(groups.begin(), groups.end(), [](const FusionGroup& a, const FusionGroup& b) {
      return a.nodes.back() < b.nodes.back();
    });
    return groups;
  }

 private:
  /// The group node `n` may join, or -1: all consumers of its outputs must be in one group
  /// (but see StoredValueGroup).
  int JoinableGroup(int n) {
    std::vector<int> consumers;
    for (int v : graph_.nodes()[n].outputs) {
      consumers.insert(consumers.end(), consumers_[v].begin(), consumers_[v].end());
    }
    if (consumers.empty() || pattern_[n] == OpPattern::kOpaque) return -1;
    int g = group_of_[consumers[0]];
    for (int c : consumers) {
      if (group_of_[c] != g) return StoredValueGroup(n, consumers);
    }
    return !IsReadInPlace(g) && CanJoin(n, consumers, g) ? g : -1;
  }

  /// The group that computes elementwise or reduction node `n`, whose value several groups
  /// read, or -1: the first of those groups to run, where that group has a reduction. An
  /// elementwise value: a pre-norm residual stream, read by the norm after it and by the next
  /// residual add (in training also returned, saved for the backward); stored either way,
  /// computed in the norm's group, whose kernel may store it from the norm's rows (the GPU group
  /// scheduler's element outputs), it takes no kernel of its own. A value cheap enough to
  /// compute again in each reader is copied there before the groups are formed again
  /// (recompute_shared.h); one read through a chain of such values (the residual stream) is
  /// not. A plain reduction (reduce_*: one reduce stage; a softmax op, whose own rows would
  /// lose their kernel, stays out): a log-softmax's row max, read by the sum of exponentials
  /// and, once `x - max` is copied into its readers, by a loss's gather of the target's
  /// `x - max`. It joins the sum's group (the same rows reduced, CanJoin) and, stored for the
  /// gather, keeps a kernel of its own there; before, it stayed a group of its own, the copies
  /// of `x - max` it read would have been stored, and so `x - max` was stored whole.
  int StoredValueGroup(int n, const std::vector<int>& consumers) const {
    const Node& node = graph_.nodes()[n];
    const bool joins = pattern_[n] == OpPattern::kElementwise ||
                       pattern_[n] == OpPattern::kBroadcast ||
                       (pattern_[n] == OpPattern::kReduction && node.op.rfind("reduce_", 0) == 0);
    if (!joins || node.outputs.size() != 1) return -1;
    // Groups run in the order of the nodes that started them (their last nodes): the group
    // whose starter comes first runs first.
    int g = -1;
    for (int c : consumers) {
      const int h = group_of_[c];
      if (g < 0 || members_[h].front() < members_[g].front()) g = h;
    }
    std::vector<int> in_g;
    for (int c : consumers) {
      if (group_of_[c] == g) in_g.push_back(c);
    }
    const bool reduces = std::any_of(members_[g].begin(), members_[g].end(),
                                     [&](int m) { return pattern_[m] == OpPattern::kReduction; });
    // No cycle: the other readers' groups run later than `g` and feed it nothing, since a group
    // feeds others only through its starter or through a node that joined the first of its
    // readers' groups, and so only groups that run after it.
    return reduces && !IsReadInPlace(g) && CanJoin(n, in_g, g) ? g : -1;
  }

  /// Whether group `g` is a lone reshape that only ops reading their inputs' bytes read
  /// (OpDef::extern_reads_data_only: a matmul's library call reads the source's buffer): the
  /// reshape is never computed, and a producer that joined it would leave its own group (a
  /// LayerNorm whose output feeds a matmul through a view would lose its row kernel).
  bool IsReadInPlace(int g) const {
    if (members_[g].size() != 1) return false;
    const Node& r = graph_.nodes()[members_[g][0]];
    if (r.op != "reshape" || IsGraphOutput(graph_, r.outputs[0])) return false;
    for (int c : consumers_[r.outputs[0]]) {
      if (!def_[c]->extern_reads_data_only) return false;
    }
    return true;
  }

  bool CanJoin(int n, const std::vector<int>& consumers, int g) const {
    bool has_out_fusible = false, has_reduction = false, only_elementwise = true;
    for (int m : members_[g]) {
      OpPattern p = pattern_[m];
      if (p == OpPattern::kOpaque) return false;
      has_out_fusible = has_out_fusible || p == OpPattern::kOutFusible;
      has_reduction = has_reduction || p == OpPattern::kReduction;
      bool input_less = graph_.nodes()[m].inputs.empty();
      if (p != OpPattern::kElementwise && p != OpPattern::kBroadcast &&
          p != OpPattern::kReduction && !input_less) {
        only_elementwise = false;
      }
    }
    switch (pattern_[n]) {
      case OpPattern::kElementwise:
      case OpPattern::kBroadcast:
      case OpPattern::kInjective:
        // Nothing fuses into an out-fusible op's inputs (no prologue fusion).
        for (int c : consumers) {
          if (pattern_[c] == OpPattern::kOutFusible) return false;
        }
        return true;
      case OpPattern::kReduction: {
        if (has_out_fusible || !only_elementwise) return false;
        if (!has_reduction) return true;
        auto key = ReductionKey(graph_, graph_.nodes()[n], *def_[n]);
        if (!key) return false;
        for (int m : members_[g]) {
          if (pattern_[m] != OpPattern::kReduction) continue;
          auto other = ReductionKey(graph_, graph_.nodes()[m], *def_[m]);
          if (!other || *other != *key) return false;
        }
        return true;
      }
      case OpPattern::kOutFusible:
        return options_.fuse_epilogue_into_extern && !has_out_fusible && !has_reduction &&
               only_elementwise;
      case OpPattern::kOpaque:
        return false;
    }
    return false;
  }

  FusionGroup Describe(std::vector<int> nodes) const {
    std::sort(nodes.begin(), nodes.end());
    FusionGroup group;
    group.nodes = nodes;
    group.master = nodes.back();
    int rank = 0;  // elementwise < broadcast < injective < reduction < out-fusible, opaque
    auto order = [](OpPattern p) {
      switch (p) {
        case OpPattern::kElementwise:
          return 0;
        case OpPattern::kBroadcast:
          return 1;
        case OpPattern::kInjective:
          return 2;
        case OpPattern::kReduction:
          return 3;
        case OpPattern::kOutFusible:
          return 4;
        case OpPattern::kOpaque:
          return 5;
      }
      return 0;
    };
    group.pattern = pattern_[nodes[0]];
    rank = order(group.pattern);
    int master_rank = -1;
    for (int n : nodes) {
      OpPattern p = pattern_[n];
      if (order(p) > rank) {
        rank = order(p);
        group.pattern = p;
      }
      // The out-fusible node, else the last reduction, else the last node.
      int m = p == OpPattern::kOutFusible ? 2 : p == OpPattern::kReduction ? 1 : 0;
      if (m >= master_rank) {
        master_rank = m;
        group.master = n;
      }
    }
    return group;
  }

  const Graph& graph_;
  const FusionOptions& options_;
  std::vector<std::vector<int>> consumers_;
  std::vector<const OpDef*> def_;
  std::vector<OpPattern> pattern_;
  std::vector<int> group_of_;
  std::vector<std::vector<int>> members_;
};

}  // namespace

std::vector<int> GroupOfNodes(const std::vector<FusionGroup>& groups, size_t num_nodes) {
  std::vector<int> group_of(num_nodes, -1);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (int n : groups[g].nodes) group_of[n] = static_cast<int>(g);
  }
  return group_of;
}

FusedGraph FuseOperators(Graph graph, const FusionOptions& options) {
  std::vector<FusionGroup> groups = Fuser(graph, options).Run();
  return FusedGraph{std::move(graph), std::move(groups)};
}

}  // namespace cinn_like::hlir
