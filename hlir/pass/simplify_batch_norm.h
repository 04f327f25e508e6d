/// \file Inference simplification: batch_norm to a per-channel scale and shift.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Rewrites every batch_norm(x, scale, bias, mean, variance) (channel axis a, epsilon e) as
///   s = scale / sqrt(variance + e),  t = bias - mean * s        (on the [C] vectors)
///   y = x * S + T                 with S, T = s, t expand_dims'ed to [C, 1, ..., 1]
/// so that they broadcast along axis a. The result keeps the batch_norm output's name; when the
/// parameters are constants, constant folding turns s and t into constants.
absl::StatusOr<Graph> SimplifyBatchNorm(const Graph& graph);

}  // namespace cinn_like::hlir
