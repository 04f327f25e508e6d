/// \file The integer arguments of each library call (ir/library_functions.h's LibraryCall): a
/// struct per call with named fields, and one order, its `Fields`, which is the order of the
/// runtime's C functions (runtime/cuda/cublas.h, cublaslt.h, cudnn.h, runtime/x86/onednn.h).
/// An op fills the fields with IR expressions (T = ir::Expr, hlir/ops/*_extern.cc) and the
/// call passes ArgList of them after its pointers; the graph pipeline's probes fill them with
/// numbers (T = int64_t, kArgAtCall where unknown); a library's check reads them back by name
/// (ArgsFromList, backends/library_functions.cc). One more argument is one more field here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace cinn_like::ir {

/// kMatmul and kMatmulEpilogue: row-major strided-batched C = A B (+ bias, then activation).
template <typename T>
struct MatmulArgs {
  static constexpr const char* kName = "matmul";
  T has_bias{}, dtype{};  // dtype: runtime/cuda/cublas.h's MatmulDType codes
  T batch{}, m{}, n{}, k{}, trans_a{}, trans_b{}, batch_stride_a{}, batch_stride_b{};
  T activation{};  // kMatmulEpilogue's: 0 none, 1 relu, 2 gelu (tanh approximation)

  /// `f` on each field in the C functions' order; activation only with `epilogue`.
  template <typename Self, typename F>
  static constexpr void Fields(Self& a, bool epilogue, F&& f) {
    f(a.has_bias), f(a.dtype), f(a.batch), f(a.m), f(a.n), f(a.k), f(a.trans_a), f(a.trans_b);
    f(a.batch_stride_a), f(a.batch_stride_b);
    if (epilogue) f(a.activation);
  }
};

/// kConv2d, kConv2dChannelsLast and kConv2dEpilogue: y = conv(x, w) (+ bias, then activation).
template <typename T>
struct Conv2dArgs {
  static constexpr const char* kName = "conv2d";
  T has_bias{}, dtype{}, n{}, c{}, h{}, w{}, k{}, r{}, s{}, out_h{}, out_w{};
  T pad_h{}, pad_w{}, stride_h{}, stride_w{}, dilation_h{}, dilation_w{}, groups{};
  T activation{};  // kConv2dEpilogue's (MatmulArgs' codes)

  template <typename Self, typename F>
  static constexpr void Fields(Self& a, bool epilogue, F&& f) {
    f(a.has_bias), f(a.dtype), f(a.n), f(a.c), f(a.h), f(a.w), f(a.k), f(a.r), f(a.s);
    f(a.out_h), f(a.out_w), f(a.pad_h), f(a.pad_w), f(a.stride_h), f(a.stride_w);
    f(a.dilation_h), f(a.dilation_w), f(a.groups);
    if (epilogue) f(a.activation);
  }
};

/// kConv2dBackwardData and kConv2dBackwardFilter: the sizes are the forward's (NCHW, no bias).
template <typename T>
struct Conv2dGradArgs {
  static constexpr const char* kName = "conv2d gradient";
  T dtype{}, n{}, c{}, h{}, w{}, k{}, r{}, s{}, out_h{}, out_w{};
  T pad_h{}, pad_w{}, stride_h{}, stride_w{}, dilation_h{}, dilation_w{}, groups{};

  template <typename Self, typename F>
  static constexpr void Fields(Self& a, bool /*epilogue*/, F&& f) {
    f(a.dtype), f(a.n), f(a.c), f(a.h), f(a.w), f(a.k), f(a.r), f(a.s), f(a.out_h), f(a.out_w);
    f(a.pad_h), f(a.pad_w), f(a.stride_h), f(a.stride_w), f(a.dilation_h), f(a.dilation_w);
    f(a.groups);
  }
};

/// The arguments as the call passes them, after its pointers (`epilogue`: the activation last).
template <template <typename> class Args, typename T>
std::vector<T> ArgList(const Args<T>& a, bool epilogue = false) {
  std::vector<T> list;
  Args<T>::Fields(a, epilogue, [&](const T& v) { list.push_back(v); });
  return list;
}

/// `list` read back by field; an error naming `call` when its length is not the struct's.
template <template <typename> class Args, typename T>
absl::StatusOr<Args<T>> ArgsFromList(const std::vector<T>& list, bool epilogue,
                                     const std::string& call) {
  Args<T> a;
  size_t count = 0;
  Args<T>::Fields(a, epilogue, [&](T&) { ++count; });
  if (list.size() != count) {
    return absl::InternalError(
        absl::StrCat("the ", call, " call takes ", count, " integer arguments, not ", list.size()));
  }
  size_t i = 0;
  Args<T>::Fields(a, epilogue, [&](T& v) { v = list[i++]; });
  return a;
}

/// The number of fields of `Args` (with the activation where `epilogue`), at compile time.
template <template <typename> class Args>
constexpr size_t ArgCount(bool epilogue) {
  Args<int64_t> a{};
  size_t count = 0;
  Args<int64_t>::Fields(a, epilogue, [&count](int64_t&) { ++count; });
  return count;
}

/// Every field `value` (a probe's kArgAtCall).
template <template <typename> class Args, typename T>
Args<T> ArgsAll(const T& value) {
  Args<T> a;
  Args<T>::Fields(a, /*epilogue=*/true, [&](T& v) { v = value; });
  return a;
}

}  // namespace cinn_like::ir
