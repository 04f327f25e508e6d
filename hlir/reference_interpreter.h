/// \file The reference interpreter: runs a Graph on the CPU op by op with plain loops in double
/// (each result rounded to its dtype), the oracle of the tests and of the accuracy self-check.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "hlir/graph.h"
#include "hlir/host_tensor.h"

namespace cinn_like::hlir {

/// Runs `graph` on `inputs` (one per graph input, in order; dtypes must match and shapes fit,
/// symbolic dims bound consistently) and returns the graph outputs in order. Errors name the
/// input, its shape and what was expected, or the op that failed.
absl::StatusOr<std::vector<HostTensor>> RunReference(const Graph& graph,
                                                     const std::vector<HostTensor>& inputs);

}  // namespace cinn_like::hlir
