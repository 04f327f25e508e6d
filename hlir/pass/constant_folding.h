/// \file Constant folding on graphs.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// The largest constant folding makes, and the largest `constant` the graph compiler inlines
/// into kernels: a folded result of more elements stays the ops that compute it.
inline constexpr int64_t kMaxFoldedConstantElements = 64;

/// The largest value constant folding evaluates to see whether it is uniform (one value
/// throughout), which a `fill` of any size stands for.
inline constexpr int64_t kMaxUniformElements = 1 << 16;

/// Evaluates, with the reference interpreter, every node whose inputs are all known (the
/// outputs of input-less ops such as fill, arange and constant, or of nodes evaluated before)
/// and whose outputs are static with at most kMaxUniformElements elements each, and replaces
/// it, where each output has at most `max_elements` elements or is uniform, by `constant` nodes
/// (hlir/ops/constant.cc) or, for a uniform output above `max_elements`, `fill` nodes, with the
/// same output names; other evaluated nodes stay, their values known to the nodes after them.
/// HF BERT's test that each query is in range ([1, 1, S, 1], all true) is a fill at any S, so
/// that its padding mask narrows (hlir/pass/narrow_attention_masks.h). Input-less nodes stay as
/// they are; those left unused are dead code for EliminateDeadCode.
absl::StatusOr<Graph> FoldConstants(const Graph& graph,
                                    int64_t max_elements = kMaxFoldedConstantElements);

}  // namespace cinn_like::hlir
