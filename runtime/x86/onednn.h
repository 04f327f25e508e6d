/// \file oneDNN (libdnnl.so.2), loaded with dlopen at the first use so that binaries run where
/// it is absent: the x86 matmul and conv2d externs that JIT host code calls
/// (cinn_like_dnnl_matmul, cinn_like_dnnl_conv2d), with the argument lists of the cuBLAS and
/// cuDNN externs (runtime/cuda/cublas.h, cudnn.h), and the compile-time checks that make their
/// primitives. A primitive is made once per configuration and kept for the process; a call
/// wraps its pointers and runs it on oneDNN's OpenMP threads, as many as the runtime's pool.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/library_args.h"

namespace cinn_like::runtime::x86 {

/// Element types of the externs (their `dtype` argument), the codes of the cuBLAS extern's.
enum DnnlDType : int64_t { kDnnlFloat32 = 0, kDnnlFloat16 = 1, kDnnlBFloat16 = 2 };

/// The epilogue's activations: none, relu, PyTorch's gelu(approximate="tanh").
enum DnnlActivation : int64_t {
  kDnnlActivationNone = 0,
  kDnnlActivationRelu = 1,
  kDnnlActivationGeluTanh = 2
};

/// Row-major, batched: C[b] (m x n) = op(A[b]) op(B[b]) (+ bias[n] on every row), with A[b] at
/// a + b * batch_stride_a elements (m x k, or k x m when trans_a), B[b] likewise (k x n, or
/// n x k), C contiguous. A batch stride of 0 broadcasts that operand. Host pointers.
struct DnnlMatmulArgs {
  const void* a;
  const void* b;
  const void* bias;  // null: none
  void* c;
  int64_t dtype;
  int64_t batch, m, n, k;
  bool trans_a, trans_b;
  int64_t batch_stride_a, batch_stride_b;
  /// Applied after the bias by the primitive (a post-op): kDnnlActivation* (the codes of
  /// ir::LibraryCall::kMatmulEpilogue's `activation`).
  int64_t activation = 0;
};

/// NCHW forward convolution y = conv(x, w) (+ bias[k] per output channel): x [n, c, h, w],
/// w [k, c / groups, r, s], y [n, k, out_h, out_w], symmetric paddings, dilations counted as
/// PyTorch does (1: none). Host pointers.
struct DnnlConv2dArgs {
  const void* x;
  const void* w;
  const void* bias;  // null: none
  void* y;
  int64_t dtype;
  int64_t n, c, h, w_dim, k, r, s, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, groups;
  /// Applied after the bias by the primitive (a post-op): kDnnlActivation*.
  int64_t activation = 0;
};

/// Whether oneDNN can be loaded: its version ("oneDNN 2.6.3"), or Unavailable naming the
/// libraries tried.
absl::StatusOr<std::string> DnnlVersion();

/// Makes (once; later calls find it) the primitive of the configuration of `args` (pointers
/// unused) and says which implementation runs it ("oneDNN 2.6.3 brg:avx512_core"). Errors name
/// the shapes: Unavailable when oneDNN cannot be loaded; Unimplemented or InvalidArgument with
/// oneDNN's status when it refuses them, Unimplemented too when it has only its reference
/// implementation for them (plain loops, slower than the generated compute).
absl::StatusOr<std::string> DnnlPrepareMatmul(const DnnlMatmulArgs& args);
absl::StatusOr<std::string> DnnlPrepareConv2d(const DnnlConv2dArgs& args);

/// Runs the call (its primitive made at the first call of the configuration); errors as the
/// Prepare functions', and ResourceExhausted when the scratchpad cannot be allocated.
absl::Status DnnlMatmul(const DnnlMatmulArgs& args);
absl::Status DnnlConv2d(const DnnlConv2dArgs& args);

}  // namespace cinn_like::runtime::x86

/// The externs (C ABI, JIT runtime symbols): the pointers, then the integers of
/// runtime/library_args.h's lists in their order, bias used when has_bias, `stream` ignored (CPU
/// calls are synchronous); 0 on success, else -1 with the message in cinn_like_get_last_error().
extern "C" int cinn_like_dnnl_matmul(const void* a, const void* b, const void* bias, void* c,
                                     CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM) void* stream);
/// cinn_like_dnnl_matmul with `activation` after the bias (ir::LibraryCall::kMatmulEpilogue's
/// arguments, as cinn_like_cublaslt_matmul's); k must be at least 1.
extern "C" int cinn_like_dnnl_matmul_epilogue(const void* a, const void* b, const void* bias,
                                              void* c,
                                              CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM)
                                                  int64_t activation,
                                              void* stream);
/// cinn_like_dnnl_conv2d with `activation` after the bias (ir::LibraryCall::kConv2dEpilogue).
extern "C" int cinn_like_dnnl_conv2d_epilogue(const void* x, const void* w, const void* bias,
                                              void* y,
                                              CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM)
                                                  int64_t activation,
                                              void* stream);
extern "C" int cinn_like_dnnl_conv2d(const void* x, const void* w, const void* bias, void* y,
                                     CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM) void* stream);
