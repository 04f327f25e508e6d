/// \file The integer arguments of the runtime's library calls, once: a list per call (an
/// X-macro) in the one order their C functions take them after their pointers, and a struct per
/// call declared from it. The C functions' parameters (runtime/cuda/cublas.h, cublaslt.h,
/// cudnn.h, runtime/x86/onednn.h) are written from the lists; the compiler fills the structs
/// with IR expressions and passes them in that order (ir/library_calls.h). One more argument is
/// one more name in a list.
#pragma once

#include <cstdint>

// Each list in the order the C functions take its arguments.
// clang-format off
/// kMatmul (and kMatmulEpilogue, which adds `activation` last): row-major strided-batched
/// C = op(A) op(B) (+ bias). dtype: runtime/cuda/cublas.h's MatmulDType codes.
#define CINN_LIKE_MATMUL_ARGS(X) \
  X(has_bias) X(dtype) X(batch) X(m) X(n) X(k) X(trans_a) X(trans_b) \
  X(batch_stride_a) X(batch_stride_b)
/// kConv2d, kConv2dChannelsLast (and kConv2dEpilogue, which adds `activation` last).
#define CINN_LIKE_CONV2D_ARGS(X) \
  X(has_bias) X(dtype) X(n) X(c) X(h) X(w) X(k) X(r) X(s) X(out_h) X(out_w) \
  X(pad_h) X(pad_w) X(stride_h) X(stride_w) X(dilation_h) X(dilation_w) X(groups)
/// kConv2dBackwardData and kConv2dBackwardFilter: the forward's sizes (NCHW, no bias).
#define CINN_LIKE_CONV2D_GRAD_ARGS(X) \
  X(dtype) X(n) X(c) X(h) X(w) X(k) X(r) X(s) X(out_h) X(out_w) \
  X(pad_h) X(pad_w) X(stride_h) X(stride_w) X(dilation_h) X(dilation_w) X(groups)
// clang-format on

/// A C function's parameter for argument `name`, and its value in a struct's initializer (the
/// parameters are named arg_<name>: a convolution's `w` is also its weights' pointer).
#define CINN_LIKE_ARG_PARAM(name) int64_t arg_##name,
#define CINN_LIKE_ARG_VALUE(name) arg_##name,

// The structs' fields and their visit, from a list (this header's own).
#define CINN_LIKE_ARG_FIELD(name) T name{};
#define CINN_LIKE_ARG_VISIT(name) f(a.name);

namespace cinn_like::runtime {

/// The arguments of a matmul; `activation` (0 none, 1 relu, 2 gelu, tanh approximation) only
/// for the epilogue's call.
template <typename T>
struct MatmulArgList {
  static constexpr const char* kName = "matmul";
  CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_FIELD)
  T activation{};

  /// `f` on each field in the C functions' order; activation only with `epilogue`.
  template <typename Self, typename F>
  static constexpr void Fields(Self& a, bool epilogue, F&& f) {
    CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_VISIT)
    if (epilogue) f(a.activation);
  }
};

/// The arguments of a convolution (activation: MatmulArgList's codes, the epilogue's only).
template <typename T>
struct Conv2dArgList {
  static constexpr const char* kName = "conv2d";
  CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_FIELD)
  T activation{};

  template <typename Self, typename F>
  static constexpr void Fields(Self& a, bool epilogue, F&& f) {
    CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_VISIT)
    if (epilogue) f(a.activation);
  }
};

/// The arguments of a convolution's gradient.
template <typename T>
struct Conv2dGradArgList {
  static constexpr const char* kName = "conv2d gradient";
  CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_FIELD)

  template <typename Self, typename F>
  static constexpr void Fields(Self& a, bool /*epilogue*/, F&& f) {
    CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_VISIT)
  }
};

#undef CINN_LIKE_ARG_FIELD
#undef CINN_LIKE_ARG_VISIT

/// A library's own arguments struct `out` given a matmul list's sizes by name (the dtype, the
/// shapes, the transposes as bools and the batch strides; not has_bias, which says whether the
/// library's bias pointer is set).
template <typename Out, typename T>
void SetMatmulSizes(const MatmulArgList<T>& a, Out& out) {
  out.dtype = a.dtype;
  out.batch = a.batch;
  out.m = a.m;
  out.n = a.n;
  out.k = a.k;
  out.trans_a = a.trans_a != 0;
  out.trans_b = a.trans_b != 0;
  out.batch_stride_a = a.batch_stride_a;
  out.batch_stride_b = a.batch_stride_b;
}

/// The same for a convolution's list, a forward's or a gradient's (the input's width `w` is
/// the library struct's w_dim: w is its weights' pointer there).
template <typename Out, typename List>
void SetConv2dSizes(const List& a, Out& out) {
  out.dtype = a.dtype;
  out.n = a.n;
  out.c = a.c;
  out.h = a.h;
  out.w_dim = a.w;
  out.k = a.k;
  out.r = a.r;
  out.s = a.s;
  out.out_h = a.out_h;
  out.out_w = a.out_w;
  out.pad_h = a.pad_h;
  out.pad_w = a.pad_w;
  out.stride_h = a.stride_h;
  out.stride_w = a.stride_w;
  out.dilation_h = a.dilation_h;
  out.dilation_w = a.dilation_w;
  out.groups = a.groups;
}

}  // namespace cinn_like::runtime
