/// \file Fresh random inputs for a graph, the ones the accuracy self-checks compare compiled code
/// with the reference interpreter on (cinn_like/verify/) and the tuner and the group report time
/// kernels on (cinn_like/tune/group_timing.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hlir/graph.h"
#include "hlir/host_tensor.h"

namespace cinn_like {

struct RandomInputOptions {
  uint64_t seed = 1;
  std::map<std::string, int64_t> sizes;  // symbolic dims; others take `default_size`
  int64_t default_size = 7;
  double int_low = -5, int_high = 5;  // integer inputs (uint8: from 0); floats are in [-2, 2]
};

/// Random values for every input of `graph`: floats uniform in [-2, 2] (rounded to their
/// dtype), integers in [int_low, int_high], bools half true; symbolic dims take o.sizes, else
/// o.default_size. The same seed gives the same tensors.
std::vector<hlir::HostTensor> RandomInputs(const hlir::Graph& graph, const RandomInputOptions& o);

}  // namespace cinn_like
