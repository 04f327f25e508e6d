/// \file Transpose folding (CINN's TransposeFoldingInput): a matmul operand that is a transpose
/// of its last two dims reads the transpose's input with the matmul's transpose flag flipped,
/// so cuBLAS (or the generated kernel) reads it transposed instead of a kernel writing the
/// transposed copy first. PyTorch's linear layers arrive as mm(x, t(weight)): every one of
/// them had a transpose kernel over its weight at each call.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Rewrites matmul(transpose(a, perm), b) to matmul(a, b) with transpose_x flipped (likewise
/// for the second operand and transpose_y) when `perm` swaps the last two dims and keeps the
/// others. The transpose stays when something else reads it (dead-code elimination removes it
/// otherwise). An operand transpose(a, perm) of rank 3 or more, or a reshape of one merging its
/// batch dims, whose perm makes a's innermost dim the second-to-last (HF's eager attention's
/// key [B, S, H, D] made [B, H, D, S]), read by the matmul alone, becomes the transpose with
/// its last two dims swapped (a's rows copied whole, or no copy when that is the identity),
/// read transposed: a copy that reads across rows costs many times one that does not.
absl::StatusOr<Graph> FoldTransposeIntoMatmul(const Graph& graph);

}  // namespace cinn_like::hlir
