/// \file Reshape folding into matmuls: PyTorch's linear layer on a [B, T, K] input arrives as
/// view [B*T, K] -> mm (-> add bias) -> view [B, T, N]. A matmul reads its operands and writes
/// its result whole (a library call, or a stored extern), so each view was a copy kernel of
/// the activation where it met a graph input or output. A matmul takes a [B, T, K] operand
/// with a [K, N] weight directly (its batch broadcast, one GEMM of B*T rows: see
/// matmul_extern.cc), so the views go.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Rewrites matmul(reshape(x), y) to matmul(x, y) when the reshape only merges x's leading
/// dims into one ([..., K] to [R, K]), the matmul does not transpose x and y has rank 2; the
/// matmul's epilogue (bias, activation) stays. Its result is then [..., N]: a consumer that
/// is a reshape to that shape reads it directly, others read it reshaped back to [R, N].
absl::StatusOr<Graph> FoldReshapeIntoMatmul(const Graph& graph);

}  // namespace cinn_like::hlir
