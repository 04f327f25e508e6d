/// \file cuBLAS, loaded with dlopen at first use like the driver, so binaries start where it
/// is absent. Today the benchmarks use it as the SGEMM baseline; the graph level's matmul
/// externs will call it through the same loader.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace cinn_like::runtime::cuda {

/// Row-major C[m, n] = A[m, k] x B[k, n] in float32 on `stream` (a CUstream, null for the
/// default stream) with cuBLAS's default math mode (true FP32, no TF32). Device pointers.
/// Unavailable when libcublas cannot be loaded; Internal naming the cuBLAS status otherwise.
absl::Status CublasSgemmRowMajor(const float* a, const float* b, float* c, int64_t m, int64_t n,
                                 int64_t k, void* stream);

}  // namespace cinn_like::runtime::cuda
