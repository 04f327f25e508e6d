/// \file Dead-code elimination on graphs.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Removes every node none of whose outputs reaches a graph output. Inputs are kept (they are
/// the calling convention) even when unused.
absl::StatusOr<Graph> EliminateDeadCode(const Graph& graph);

}  // namespace cinn_like::hlir
