/// \file Outputs of compiled code against the reference interpreter's, element by element at a
/// tolerance per dtype: the comparison of both accuracy self-checks (cinn_like/verify/).
#pragma once

#include <string>
#include <vector>

#include "hlir/dtype.h"
#include "hlir/host_tensor.h"

namespace cinn_like {

/// Relative and absolute tolerance of a dtype: a few units in the last place of its format;
/// 0 (exact) for integers and bool.
double Tolerance(hlir::DType t);

/// Compares the outputs `got` with the reference's `want` (the same dtypes and shapes), element
/// by element at Tolerance(dtype) (NaN must meet NaN, an infinity itself). Returns "" when all
/// match, else one line per differing element, at most 3 per output then a count:
///   "  output y (float32[4, 5]) element 3: got 0.5, want -0.5 (tolerance 0.0001)".
std::string CompareOutputs(const std::vector<std::string>& names,
                           const std::vector<hlir::HostTensor>& want,
                           const std::vector<hlir::HostTensor>& got);

}  // namespace cinn_like
