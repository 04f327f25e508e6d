/// \file GraphRewriter: how graph passes change a Graph. A Graph is append-only and always well
/// typed (every node went through its op's inference), so a pass never edits one in place: it
/// walks the old graph's nodes in order and builds a new graph with a rewriter, copying each
/// node (its inputs renamed through the rewriter's value map), dropping it, or emitting other
/// nodes in its place and mapping the old outputs to their replacements. Inputs keep their
/// names and order; copied nodes and replacement outputs keep their names, so graph outputs
/// keep theirs; new intermediate values get fresh names that neither graph uses.
///
///   GraphRewriter rw(old);
///   for (int n = 0; n < num_nodes; ++n) if (keep[n]) RETURN_IF_ERROR(rw.CopyNode(n));
///   return rw.Finish();
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

class GraphRewriter {
 public:
  /// Starts the new graph with the old graph's inputs (same names, descs and order).
  explicit GraphRewriter(const Graph& old);

  const Graph& old_graph() const { return old_; }
  const Graph& new_graph() const { return new_; }

  /// The new value standing for old value `old_value`; -1 while it has none.
  int Map(int old_value) const { return map_[old_value]; }
  /// Makes `new_value` stand for `old_value` (a replacement). The new value's desc must equal
  /// the old one's (CHECK: a pass that changes a type is a bug).
  void SetMap(int old_value, int new_value);

  /// Copies old node `node` (same op, attributes and output names) with its inputs mapped, and
  /// maps its outputs. Every input must be mapped (CHECK).
  absl::Status CopyNode(int node);
  /// Adds a new node on new values; outputs get fresh names built from `hint`, or the given
  /// `output_names` (which must be unused).
  absl::StatusOr<std::vector<int>> AddNode(const std::string& op, const std::vector<int>& inputs,
                                           const AttributeMap& attrs, const std::string& hint,
                                           const std::vector<std::string>& output_names = {});
  /// A name used by neither graph, "<hint>_<k>".
  std::string FreshName(const std::string& hint);

  /// Marks the old graph's outputs, mapped, in order, and returns the new graph. An output
  /// mapped to a graph input or to a value already marked is an error naming it (a pass must
  /// not merge two outputs or forward an input to an output).
  absl::StatusOr<Graph> Finish();

 private:
  const Graph& old_;
  Graph new_;
  std::vector<int> map_;
  int fresh_ = 0;
};

/// For every value of `graph`, the nodes that read it (in node order, a node once per value).
std::vector<std::vector<int>> ValueConsumers(const Graph& graph);

/// Whether value `v` is one of the graph's outputs.
bool IsGraphOutput(const Graph& graph, int v);

}  // namespace cinn_like::hlir
