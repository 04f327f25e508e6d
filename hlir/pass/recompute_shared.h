/// \file Recomputing cheap values that several fusion groups read (Inductor recomputes its
/// pointwise values in every kernel that reads them). Fusion joins a producer to its consumers'
/// group only when they all are in one group (fusion.h; graph outputs aside), so a value read by
/// two groups is stored by a kernel of its own and read back by both: softmax's `x - max` read by
/// the sum of its exponentials and by the output, a one-hot of targets read by a row sum and by the
/// gradient beside it. Here such a value is computed by a copy of its node in each group that
/// reads it, and the groups are formed again: a chain of cheap values is copied whole (a node
/// whose readers are all copies is copied into their groups), but a node that reads a cheap
/// value of another group is not (copies of copies would carry recomputation from group to
/// group: a residual stream summed again in every layer).
///
/// A node is copied when: it is elementwise, broadcast or injective with one output that is no
/// graph output and that only such nodes or reductions read (a library call reads whole stored
/// buffers); it is not a compile-time value (those are inlined into every reader already); it
/// reads no cheap value of another group; and its chain is worth copying. A chain (a top node
/// and the picked nodes it reads through) is copied into the top's k reading groups when it is
/// short (kMaxCopiedChain) and moves no more bytes than storing the top: its stored values
/// loaded k times instead of once, plus what the copies make stored anew (a reduction of the
/// group, a cheap value not copied) written and loaded k times, against the top's store and k
/// loads: loads * (k - 1) + stores * (k + 1) <= out * (k + 1), symbolic dims counted alike. A max
/// pool's gradient (a sum of nine masked terms) read by a batch norm's two sums and its gradient
/// is not copied: nine masks and the incoming gradient loaded three times cost more. A small
/// epilogue of its own group's reductions (the chain loads only reductions of the top's group,
/// its value and new stores are at most 16 KiB, static sizes: a BatchNorm's variance, [C]) is
/// copied whatever the bytes: stored, it would mostly be a kernel of its own after the
/// reduction's. A chain that gathers is not copied where a reader of its top computes 4 or
/// more times the top's elements (static sizes): each copy would gather per element of the
/// reader (HF's [B, 1, S, S] attention masks read by softmaxes over [B, H, S, S]).
#pragma once

#include <map>
#include <optional>
#include <set>

#include "absl/status/statusor.h"
#include "hlir/pass/fusion.h"

namespace cinn_like::hlir {

/// The most nodes a copied chain may have: each copy computes all of them, and a reader's group
/// past the scheduler's inline budget would store a copy again (a max pool's gradient, nine
/// masked terms summed, is some 40 nodes; a cross-entropy's one-hot about 15).
inline constexpr int kMaxCopiedChain = 24;

/// A graph with copies, and for each copy's value the node (of the graph before) it copies.
struct SharedCopies {
  Graph graph;
  std::map<int, int> copied_from;
};

/// The graph with each node the rule above picks (and `refused` does not hold) replaced by one
/// copy per group that reads it (directly or through copies of its picked readers: a chain of
/// cheap values is copied in one go), or nullopt when no node is picked or the graph would pass
/// `max_nodes` nodes.
absl::StatusOr<std::optional<SharedCopies>> CopySharedValues(const FusedGraph& fused, int max_nodes,
                                                             const std::set<int>& refused = {});

/// Attempts of FuseRecomputingSharedValues before it gives up copying.
inline constexpr int kMaxCopyAttempts = 4;

/// FuseOperators, then CopySharedValues and fusion again. Where fusing again stores a copy
/// (the readers of one group fell into several), the copied node is refused and the copies made
/// again from the first fusion, up to kMaxCopyAttempts times, then the first fusion stands. The
/// graph grows to at most twice its nodes. `options` must have fusion enabled (else: the first
/// fusion, one group per node).
absl::StatusOr<FusedGraph> FuseRecomputingSharedValues(Graph graph, const FusionOptions& options);

}  // namespace cinn_like::hlir
