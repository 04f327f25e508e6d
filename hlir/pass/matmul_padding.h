/// \file Matmul padding for aligned library GEMMs. cuBLAS runs its fast tensor-core kernels
/// only when every matrix's rows start on 16-byte boundaries; a row-major matrix whose row
/// length (its leading dimension: K or M of the left operand, N or K of the right one, N of
/// the product) is not a multiple of 16 bytes gets the slow align1 kernels. GPT-2's
/// vocabulary of 50257 made its LM head's three bfloat16 GEMMs (logits, and both gradients)
/// take 2 ms of a 7 ms training step, where an aligned GEMM of the same size takes a tenth.
/// Padding such a dim with zeros to a whole number of 16-byte units (zeros add nothing to a
/// sum, extra rows and columns are sliced away) costs a copy of the padded operand, which
/// fuses into the operand's producer where it can.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Products smaller than this many multiply-adds are not padded: the copies would cost more
/// than the slower kernel.
inline constexpr int64_t kMinPaddedMatmulMacs = int64_t{1} << 24;
/// Dims shorter than this are not padded: padding would add more than an eighth to the work.
inline constexpr int64_t kMinPaddedDim = 64;

/// Rewrites each matmul of float16 or bfloat16 operands with static shapes, at least
/// kMinPaddedMatmulMacs multiply-adds, whose operands' or product's row length is not a whole
/// number of 16-byte units (and at least kMinPaddedDim long), to pad (zeros) -> matmul on the
/// padded operands (bias padded too) -> slice back to the product's shape, named as before.
absl::StatusOr<Graph> PadMatmulsForAlignment(const Graph& graph);

}  // namespace cinn_like::hlir
