/// \file Split into slices: a split's outputs usually go to different consumers (attention's
/// q, k and v), and fusion puts a node into its consumers' group only when every output's
/// readers are in that one group, so a split was a kernel of its own writing each part. One
/// slice per output fuses into whatever reads that output.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Rewrites each split node to one slice node per output (along the split's axis, at the
/// offsets its sections give), each output keeping its name.
absl::StatusOr<Graph> SplitToSlices(const Graph& graph);

}  // namespace cinn_like::hlir
