/// \file cuBLAS, loaded with dlopen at first use like the driver, so binaries start where it
/// is absent: the SGEMM baseline of the benchmarks and the matmul extern that JIT host code
/// calls (cinn_like_cublas_matmul).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/library_args.h"

namespace cinn_like::runtime::cuda {

/// Row-major C[m, n] = A[m, k] x B[k, n] in float32 on `stream` (a CUstream, null for the
/// default stream) with cuBLAS's default math mode (true FP32, no TF32). Device pointers.
/// Unavailable when libcublas cannot be loaded; Internal naming the cuBLAS status otherwise.
absl::Status CublasSgemmRowMajor(const float* a, const float* b, float* c, int64_t m, int64_t n,
                                 int64_t k, void* stream);

/// Element types of the matmul extern (its `dtype` argument). kMatmulFloat32Tf32: float32
/// operands that tensor cores may round to TF32 (10-bit mantissa; CUBLAS_COMPUTE_32F_FAST_TF32),
/// accumulated in float32: the code of a matmul whose attribute allow_tf32 permits it (exact for
/// operands cast from float16 or bfloat16, whose values TF32 holds).
enum MatmulDType : int64_t {
  kMatmulFloat32 = 0,
  kMatmulFloat16 = 1,
  kMatmulBFloat16 = 2,
  kMatmulFloat32Tf32 = 3
};

/// Row-major, batched: C[b] (m x n) = op(A[b]) op(B[b]) (+ bias[n] on every row), with A[b] at
/// a + b * batch_stride_a (m x k, or k x m when trans_a), B[b] likewise (k x n, or n x k), C
/// contiguous. A batch stride of 0 broadcasts that operand. Float32 accumulates in true FP32
/// (no TF32); float16/bfloat16 in FP32. Device pointers; `stream` a CUstream.
struct MatmulArgs {
  const void* a;
  const void* b;
  const void* bias;  // null: none
  void* c;
  int64_t dtype;
  int64_t batch, m, n, k;
  bool trans_a, trans_b;
  int64_t batch_stride_a, batch_stride_b;
  void* stream;
};

/// The cudaDataType value of a MatmulDType code, or -1 for another code.
int MatmulCudaDataType(int64_t dtype);
/// The cublasComputeType_t of a MatmulDType code: float32 accumulation, on TF32 tensor cores
/// for kMatmulFloat32Tf32.
int MatmulComputeType(int64_t dtype);

/// The MatmulArgs of a matmul extern's pointers and integer arguments (the bias used where
/// has_bias).
MatmulArgs MatmulArgsOf(const void* a, const void* b, const void* bias, void* c,
                        const MatmulArgList<int64_t>& args, void* stream);

/// cublasGemmStridedBatchedEx (the bias first through a rank-1 cublasGemmEx); errors name the
/// sizes, the dtype and the cuBLAS status; Unavailable when cuBLAS cannot be loaded.
absl::Status CublasMatmul(const MatmulArgs& args);

}  // namespace cinn_like::runtime::cuda

/// The matmul extern (C ABI, a JIT runtime symbol): the pointers, then the integers of
/// runtime/library_args.h's CINN_LIKE_MATMUL_ARGS in its order, bias used when has_bias; 0 on
/// success, else -1 with the message in cinn_like_get_last_error().
extern "C" int cinn_like_cublas_matmul(const void* a, const void* b, const void* bias, void* c,
                                       CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM) void* stream);
