/// \file Common-subexpression elimination on graphs.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Merges nodes that compute the same thing: same op, same inputs (after earlier merges) in the
/// same order, and equal attributes (equal kinds and values: an int 1 and a float 1.0 differ).
/// The later node's uses read the earlier node's outputs. A node with an output that is a graph
/// output is never merged away (each graph output keeps its own name and buffer).
absl::StatusOr<Graph> EliminateCommonSubexpressions(const Graph& graph);

}  // namespace cinn_like::hlir
