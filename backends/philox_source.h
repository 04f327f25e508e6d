/// \file The philox_uniform intrinsic (ir/intrinsics.h) as a C helper function that the CUDA and
/// OpenCL printers put before the kernels that call it: Philox4x32-10 as ir/philox.h states it.
#pragma once

#include <string>

namespace cinn_like::backends {

/// The name a philox_uniform call prints as.
inline constexpr char kPhiloxFunction[] = "cinn_like_philox_uniform";

/// `<qualifier> float cinn_like_philox_uniform(int64_t seed, int64_t stream, int64_t index)`
/// over the fixed-width types every source preamble declares, with `mulhi` the language's high
/// half of a 32 x 32-bit unsigned product (CUDA: "__device__ __forceinline__", "__umulhi";
/// OpenCL: no qualifier (a C99 inline definition alone may leave no symbol), "mul_hi").
std::string PhiloxSource(const std::string& qualifier, const std::string& mulhi);

}  // namespace cinn_like::backends
