/// \file Operator fusion: which nodes become one kernel. Every node is assigned to exactly one
/// fusion group; op lowering turns each group into one kernel (or one extern call).
///
/// Rules (TVM's and CINN's, decided node by node from the last node to the first: a producer
/// joins the group of its consumers only when ALL consumers of all its outputs already are in
/// that one group, so a value read by two groups is materialized and ends its group; groups
/// grow one producer at a time, which keeps the group graph acyclic. One exception: an
/// elementwise value, or a plain reduction's (reduce_*) of the same rows, that several groups
/// read joins the first of them to run where that group has a reduction, which stores it for
/// the others: a residual stream before its norm, a log-softmax's row max):
///   - elementwise, broadcast and injective producers join elementwise/broadcast/injective
///     groups (chains fuse), and reduction groups (fused into the reduction's input);
///   - a reduction joins a group whose other members are elementwise/broadcast (or input-less)
///     consumers (its epilogue); it joins a group that already holds reductions only when all
///     reduce the same axes of inputs of the same shape ("multi-reduce same axis": decomposed
///     softmax and layer_norm become one group);
///   - an out-fusible op (matmul, linear, conv2d) starts its own group; with
///     fuse_epilogue_into_extern it may join a group of elementwise/broadcast consumers (its
///     epilogue), and elementwise producers of that epilogue (not of the op) may join too;
///     nothing fuses into an out-fusible op's inputs;
///   - opaque ops (and the `constant` op, which is data) are alone.
#pragma once

#include <vector>

#include "hlir/graph.h"
#include "hlir/op.h"

namespace cinn_like::hlir {

struct FusionGroup {
  std::vector<int> nodes;  // node ids, ascending (topological)
  /// The node that decides the schedule: the out-fusible node, else the last reduction, else
  /// the last node.
  int master = -1;
  /// The group's kind: out-fusible or opaque when such a node is in it, else reduction when
  /// one is, else the widest of injective > broadcast > elementwise.
  OpPattern pattern = OpPattern::kElementwise;
};

/// A graph with its fusion groups, in an order where every group comes after the groups that
/// produce its inputs.
struct FusedGraph {
  Graph graph;
  std::vector<FusionGroup> groups;
};

struct FusionOptions {
  bool enabled = true;  // false: one group per node (the flag cinn_like_fusion)
  bool fuse_epilogue_into_extern = false;
};

/// Groups the nodes of `graph` by the rules above.
FusedGraph FuseOperators(Graph graph, const FusionOptions& options);

/// Per node of a graph of `num_nodes` nodes, the index of its group in `groups` (-1: none).
std::vector<int> GroupOfNodes(const std::vector<FusionGroup>& groups, size_t num_nodes);

}  // namespace cinn_like::hlir
