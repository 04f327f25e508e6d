/// \file Recomputing cheap values that several fusion groups read (Inductor recomputes its
/// pointwise values in every kernel that reads them). Fusion joins a producer to its consumers'
/// group only when they all are in one group (fusion.h), so a value read by two groups is
/// stored by a kernel of its own and read back by both: softmax's `x - max` read by the sum of
/// its exponentials and by the output, a one-hot of targets read by a row sum and by the
/// gradient beside it. Here such a value is computed by a copy of its node in each group that
/// reads it, and the groups are formed again, once: a chain of cheap values is copied whole
/// (a node whose readers are all copies is copied into their groups), but a node that reads a
/// cheap value of another group is not (copies of copies would carry recomputation from group
/// to group: a residual stream summed again in every layer).
///
/// A node is copied when: it is elementwise, broadcast or injective with one output that is no
/// graph output and that only such nodes or reductions read (a library call reads whole stored
/// buffers); it is not a compile-time value (those are inlined into every reader already); it
/// reads no cheap value of another group; and
/// copying does not read more memory than storing would: with k reading groups, the stored
/// values it reads loaded k times (k - 1 times more than by the one node) cost at most the
/// store and the k loads saved: in_bytes * (k - 1) <= out_bytes * (k + 1). Inputs that a cheap
/// node of its own group computes count nothing (they are copied too, or counted when they are
/// weighed themselves).
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "hlir/pass/fusion.h"

namespace cinn_like::hlir {

/// One round: the graph with each node the rule above picks replaced by one copy per group that
/// reads it (directly or through copies of its picked readers: a chain of cheap values is
/// copied in one round), or nullopt when no node is picked or the graph would pass `max_nodes`
/// nodes.
absl::StatusOr<std::optional<Graph>> CopySharedValues(const FusedGraph& fused, int max_nodes);

/// FuseOperators, then CopySharedValues and fusion again when it copied nodes (the graph grows
/// to at most twice its nodes).
absl::StatusOr<FusedGraph> FuseRecomputingSharedValues(Graph graph, const FusionOptions& options);

}  // namespace cinn_like::hlir
