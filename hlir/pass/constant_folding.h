/// \file Constant folding on graphs.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// The largest constant folding makes, and the largest `constant` the graph compiler inlines
/// into kernels: a folded result of more elements stays the ops that compute it.
inline constexpr int64_t kMaxFoldedConstantElements = 64;

/// Evaluates, with the reference interpreter, every node whose inputs are all constants (the
/// outputs of input-less ops such as fill, arange and constant, or of nodes folded before) and
/// whose outputs are static with at most `max_elements` elements each, and replaces it by
/// `constant` nodes (hlir/ops/constant.cc) with the same output names. Input-less nodes stay as
/// they are; those left unused are dead code for EliminateDeadCode.
absl::StatusOr<Graph> FoldConstants(const Graph& graph,
                                    int64_t max_elements = kMaxFoldedConstantElements);

}  // namespace cinn_like::hlir
