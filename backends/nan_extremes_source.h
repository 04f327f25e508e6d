/// \file The maximum and minimum math ops (ir/math.h: NaN when either operand is) as C helper
/// functions that the CUDA and OpenCL printers put before the kernels that call them.
#pragma once

#include <string>

namespace cinn_like::backends {

/// `<qualifier> float cinn_like_maximumf(float, float)` and cinn_like_minimumf, with the
/// float64 forms cinn_like_maximum and cinn_like_minimum when `fp64` (OpenCL C has doubles
/// only where its extension is enabled). Qualifier as PhiloxSource's.
std::string NanExtremesSource(const std::string& qualifier, bool fp64);

}  // namespace cinn_like::backends
