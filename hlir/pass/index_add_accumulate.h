/// \file index_add accumulating into the other term of a sum. A weight that is both looked up
/// and multiplied (GPT-2's tied embedding and LM head) gets the gradient
/// add(matmul(...), index_add(fill 0, ids, rows)): the zero table, the index_add's result and
/// the product were three workspaces of the table's size at once (3 x 147 MiB in GPT-2's
/// backward, the largest part of its peak memory above Inductor's) and the sum one more pass
/// over them. index_add(product, ids, rows) is the same sum with one workspace and no add.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Rewrites add(a, index_add(z, index, updates)) (either order), where z is a `fill` of 0,
/// the index_add's only reader is the add and is no graph output, and a has the add's shape
/// and dtype (no broadcast), to index_add(a, index, updates) under the add's output name.
/// The float result is the same sum with one rounding fewer for float16/bfloat16 (the rows'
/// sum meets a in the index_add's float32 accumulator) and bit for bit for float32.
absl::StatusOr<Graph> AccumulateIndexAddIntoSum(const Graph& graph);

}  // namespace cinn_like::hlir
