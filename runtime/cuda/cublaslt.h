/// \file cuBLASLt, loaded with dlopen at first use like cuBLAS: matmuls whose bias and
/// activation run as the GEMM's epilogue (ir::LibraryCall::kMatmulEpilogue), so that
/// relu(x W + b) writes its output once. The matmul descriptor, the layouts and the algorithm
/// of the heuristic are made once per configuration and kept for the process; a call sets the
/// bias pointer and runs.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/cublas.h"
#include "runtime/library_args.h"

namespace cinn_like::runtime::cuda {

/// The epilogue's activation (the extern's `activation` argument). kGeluTanh is PyTorch's
/// gelu(approximate="tanh"), which cuBLASLt's GELU epilogue computes.
enum MatmulActivation : int64_t {
  kActivationNone = 0,
  kActivationRelu = 1,
  kActivationGeluTanh = 2
};

/// A MatmulArgs product with `activation` applied after the bias, in float32, before the one
/// rounding to the output type. Errors name the sizes, the dtype, the epilogue and the step
/// that failed; Unavailable when cuBLASLt cannot be loaded.
absl::Status CublasLtMatmul(const MatmulArgs& args, int64_t activation);

/// The compile-time check: whether cuBLASLt can be loaded and its heuristic has an algorithm
/// for the configuration (pointers 16-byte aligned; the call asks again for its own pointers).
/// `args` pointers are ignored except that a non-null bias means one; sizes <= 0 are known
/// only at the call, and then only loading is checked. Needs a GPU (a current context).
absl::StatusOr<std::string> CublasLtCheck(const MatmulArgs& args, int64_t activation);

/// Loads cuBLASLt and makes its handle now (else the first check or call does): the status of
/// that, kept for the process.
absl::Status LoadCublasLt();

}  // namespace cinn_like::runtime::cuda

/// The epilogue extern (C ABI, a JIT runtime symbol): cinn_like_cublas_matmul's arguments with
/// `activation` (MatmulActivation) after batch_stride_b; 0 on success, else -1 with the
/// message in cinn_like_get_last_error().
extern "C" int cinn_like_cublaslt_matmul(const void* a, const void* b, const void* bias, void* c,
                                         CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM)
                                             int64_t activation,
                                         void* stream);
