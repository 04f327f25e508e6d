/// \file The library calls each target offers the extern computes (ir/library_functions.h). On
/// NVGPU cuBLAS, cuBLASLt, cuDNN and the attention kernel, by name: compiling for a GPU needs no
/// GPU, so the call itself checks (cuDNN's and cuBLASLt's checks also load the library where
/// this machine has a GPU; for static sizes cuBLASLt's asks its heuristic and cuDNN's makes
/// the plan). On x86
/// oneDNN (runtime/x86/onednn.h), when it can be loaded and
/// makes a primitive that is not its reference code for the configuration: at compile time,
/// static dims as they are, dims known only at the call at a stand-in size.
#include "ir/library_functions.h"

#include "backends/library_environment.h"
#include "ir/library_calls.h"

#include <glog/logging.h>

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "runtime/library_args.h"
#ifdef CINN_LIKE_WITH_ONEDNN
#include "runtime/x86/onednn.h"
#endif
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cudnn.h"
#include "runtime/cuda/cudnn_library.h"
#endif

namespace cinn_like::backends {
namespace {

using ir::kArgAtCall;

/// The runtime's C functions take their pointers, one int64_t per field of the call's
/// arguments (ir/library_calls.h) and the stream: a count that differs fails the build here,
/// where both are seen.
template <typename F>
struct Arity;
template <typename R, typename... A>
struct Arity<R (*)(A...)> {
  static constexpr size_t value = sizeof...(A);
};
template <template <typename> class Args, typename F>
constexpr bool TakesArgs(F, size_t pointers, bool epilogue) {
  return Arity<F>::value == pointers + ir::ArgCount<Args>(epilogue) + 1;
}
#ifdef CINN_LIKE_WITH_CUDA
static_assert(TakesArgs<ir::MatmulArgs>(&cinn_like_cublas_matmul, 4, false));
static_assert(TakesArgs<ir::MatmulArgs>(&cinn_like_cublaslt_matmul, 4, true));
static_assert(TakesArgs<ir::Conv2dArgs>(&cinn_like_cudnn_conv2d, 4, false));
static_assert(TakesArgs<ir::Conv2dArgs>(&cinn_like_cudnn_conv2d_nhwc, 4, false));
static_assert(TakesArgs<ir::Conv2dGradArgs>(&cinn_like_cudnn_conv2d_backward_data, 3, false));
static_assert(TakesArgs<ir::Conv2dGradArgs>(&cinn_like_cudnn_conv2d_backward_filter, 3, false));
#endif
#ifdef CINN_LIKE_WITH_ONEDNN
static_assert(TakesArgs<ir::MatmulArgs>(&cinn_like_dnnl_matmul, 4, false));
static_assert(TakesArgs<ir::MatmulArgs>(&cinn_like_dnnl_matmul_epilogue, 4, true));
static_assert(TakesArgs<ir::Conv2dArgs>(&cinn_like_dnnl_conv2d, 4, false));
static_assert(TakesArgs<ir::Conv2dArgs>(&cinn_like_dnnl_conv2d_epilogue, 4, true));
#endif

/// A check of `call`'s arguments read into their struct (ir/library_calls.h; `epilogue`: with
/// the activation), the check `check` of them.
template <template <typename> class Args, bool epilogue,
          absl::StatusOr<std::string> (*check)(const Args<int64_t>&)>
absl::StatusOr<std::string> Typed(const std::vector<int64_t>& v) {
  auto args = ir::ArgsFromList<Args>(v, epilogue, Args<int64_t>::kName);
  if (!args.ok()) return args.status();
  return check(*args);
}

#ifdef CINN_LIKE_WITH_CUDA
/// Where this machine has a GPU (a JIT compile): cuDNN must load and, for static sizes (no
/// kArgAtCall among `v`), have an engine or algorithm for `a`'s configuration, whose plan is
/// made during the compile on scratch tensors (CudnnPrepareConv2dBeside) and found by the first
/// call. If not, the generated kernel runs instead of a call that would fail at each run.
/// Without a GPU (compiling for another machine) the call checks.
absl::StatusOr<std::string> CheckCudnnPlan(const runtime::cuda::Conv2dArgs& a,
                                           const std::vector<int64_t>& v) {
  if (!runtime::cuda::EnsureContext().ok()) return std::string("cuDNN");
  const runtime::cuda::Cudnn& dnn = runtime::cuda::GetCudnn();
  if (!dnn.status.ok()) return dnn.status;
  if (std::find(v.begin(), v.end(), kArgAtCall) != v.end()) return std::string("cuDNN");
  // Made beside the rest of the compile, which waits for it at its end (and lowers again
  // where cuDNN turned a configuration down).
  auto made = runtime::cuda::CudnnPrepareConv2dBeside(a);
  if (!made.ok()) return made.status();
  return std::string(*made ? "cuDNN (its plan made at compile time)" : "cuDNN");
}
#endif

#ifdef CINN_LIKE_WITH_CUDA
/// The sizes both convolution calls share (Conv2dArgs or Conv2dGradArgs) as cuDNN's arguments.
template <typename Args>
runtime::cuda::Conv2dArgs CudnnConvArgs(const Args& v) {
  runtime::cuda::Conv2dArgs a{};
  runtime::SetConv2dSizes(v, a);
  return a;
}
#endif

/// A conv2d call (`channels_last`: NHWC tensors): dtype codes cuDNN takes
/// (runtime/cuda/cudnn.h) are float32 and float16; then CheckCudnnPlan.
template <bool channels_last>
absl::StatusOr<std::string> CheckCudnnConv2d(const ir::Conv2dArgs<int64_t>& v) {
  if (v.dtype != 0 && v.dtype != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "the cuDNN conv2d extern takes float32 and float16, not dtype code ", v.dtype));
  }
#ifdef CINN_LIKE_WITH_CUDA
  runtime::cuda::Conv2dArgs a = CudnnConvArgs(v);
  a.bias = v.has_bias ? &a : nullptr;  // any non-null pointer: the call adds a bias
  a.channels_last = channels_last;
  return CheckCudnnPlan(a, ir::ArgList(v));
#else
  return std::string("cuDNN");
#endif
}

/// A conv2d gradient, as CheckCudnnConv2d. `direction`: runtime/cuda/cudnn.h's ConvDirection,
/// 1 backward data, 2 backward filter.
template <int64_t direction>
absl::StatusOr<std::string> CheckCudnnConvBackward(const ir::Conv2dGradArgs<int64_t>& v) {
  if (v.dtype != 0 && v.dtype != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "the cuDNN conv2d gradients take float32 and float16, not dtype code ", v.dtype));
  }
#ifdef CINN_LIKE_WITH_CUDA
  runtime::cuda::Conv2dArgs a = CudnnConvArgs(v);
  a.direction = direction;
  return CheckCudnnPlan(a, ir::ArgList(v));
#else
  return std::string("cuDNN");
#endif
}

/// A matmul with an epilogue. Where this machine has a GPU, cuBLASLt must load and, for static
/// sizes, its heuristic must have an algorithm (else the generated kernel runs, not a call
/// that fails).
absl::StatusOr<std::string> CheckCublasLtMatmul(const ir::MatmulArgs<int64_t>& v) {
  if (v.dtype != 0 && v.dtype != 1 && v.dtype != 2) {
    return absl::UnimplementedError(absl::StrCat(
        "the cuBLASLt matmul takes float32, float16 and bfloat16, not dtype code ", v.dtype));
  }
  if (v.activation < 0 || v.activation > 2) {
    return absl::UnimplementedError(
        absl::StrCat("no cuBLASLt epilogue for activation ", v.activation));
  }
#ifdef CINN_LIKE_WITH_CUDA
  if (runtime::cuda::EnsureContext().ok()) {
    runtime::cuda::MatmulArgs a{};
    a.bias = v.has_bias ? &a : nullptr;  // any non-null pointer: the epilogue adds a bias
    runtime::SetMatmulSizes(v, a);
    // A batch stride is 0 (a broadcast operand) or its matrix's size.
    a.batch_stride_a = v.batch_stride_a == kArgAtCall ? a.m * a.k : v.batch_stride_a;
    a.batch_stride_b = v.batch_stride_b == kArgAtCall ? a.k * a.n : v.batch_stride_b;
    return runtime::cuda::CublasLtCheck(a, v.activation);
  }
#endif
  return std::string("cuBLASLt");
}

#ifdef CINN_LIKE_WITH_ONEDNN
/// oneDNN's answer, said once in the log (GLOG INFO) when it cannot be loaded.
absl::StatusOr<std::string> Logged(absl::StatusOr<std::string> answer) {
  if (!answer.ok() && absl::IsUnavailable(answer.status())) {
    static std::once_flag once;
    std::call_once(once, [&] {
      LOG(INFO) << answer.status().message() << ": x86 matmul and conv2d use generated kernels";
    });
  }
  return answer;
}

/// The size a dim known only at the call is checked at.
constexpr int64_t kStandIn = 8;
int64_t Sized(int64_t v) { return v == kArgAtCall ? kStandIn : v; }

/// A matmul, with an epilogue where `epilogue`.
template <bool epilogue>
absl::StatusOr<std::string> CheckDnnlMatmul(const ir::MatmulArgs<int64_t>& v) {
  runtime::x86::DnnlMatmulArgs a{};
  a.bias = v.has_bias ? &a : nullptr;  // any non-null pointer: the primitive takes a bias
  runtime::SetMatmulSizes(v, a);
  a.batch = Sized(v.batch);
  a.m = Sized(v.m);
  a.n = Sized(v.n);
  a.k = Sized(v.k);
  // A batch stride is 0 (a broadcast operand) or its matrix's size.
  a.batch_stride_a = v.batch_stride_a == kArgAtCall ? a.m * a.k : v.batch_stride_a;
  a.batch_stride_b = v.batch_stride_b == kArgAtCall ? a.k * a.n : v.batch_stride_b;
  if (epilogue) {
    a.activation = v.activation;
    // C = activation(bias) where k = 0, which the extern refuses: a static k = 0, or one known
    // only at the call, runs the generated kernel.
    if (a.activation != 0 && (v.k == 0 || v.k == kArgAtCall)) {
      return absl::UnimplementedError(
          "a matmul epilogue with an activation needs k >= 1, known at compile time");
    }
  }
  return Logged(runtime::x86::DnnlPrepareMatmul(a));
}

/// An output size known only at the call: the stand-in's; an input size: one that makes it.
void StandInSpatial(int64_t* in, int64_t* out, int64_t kernel, int64_t pad, int64_t stride,
                    int64_t dilation) {
  const int64_t extent = (kernel - 1) * dilation + 1;
  if (*in == kArgAtCall) *in = std::max<int64_t>(1, extent + (kStandIn - 1) * stride - 2 * pad);
  if (*out == kArgAtCall) *out = (*in + 2 * pad - extent) / stride + 1;
}

/// A conv2d, with an epilogue where `epilogue`.
template <bool epilogue>
absl::StatusOr<std::string> CheckDnnlConv2d(const ir::Conv2dArgs<int64_t>& v) {
  runtime::x86::DnnlConv2dArgs a{};
  a.bias = v.has_bias ? &a : nullptr;
  runtime::SetConv2dSizes(v, a);
  a.n = Sized(v.n);
  a.c = Sized(v.c);
  a.k = Sized(v.k);
  a.r = Sized(v.r);
  a.s = Sized(v.s);
  if (epilogue) a.activation = v.activation;
  StandInSpatial(&a.h, &a.out_h, a.r, a.pad_h, a.stride_h, a.dilation_h);
  StandInSpatial(&a.w_dim, &a.out_w, a.s, a.pad_w, a.stride_w, a.dilation_w);
  return Logged(runtime::x86::DnnlPrepareConv2d(a));
}
#endif

const bool kRegistered = [] {
  using Arch = ir::Target::Arch;
  using ir::LibraryCall;
  using ir::Conv2dArgs, ir::Conv2dGradArgs, ir::MatmulArgs;
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kMatmul,
                              {"cuBLAS", "cinn_like_cublas_matmul", nullptr, ""});
  ir::RegisterLibraryFunction(
      Arch::kNVGPU, LibraryCall::kMatmulEpilogue,
      {"cuBLASLt", "cinn_like_cublaslt_matmul", Typed<MatmulArgs, true, CheckCublasLtMatmul>, ""});
  ir::RegisterLibraryFunction(
      Arch::kNVGPU, LibraryCall::kConv2d,
      {"cuDNN", "cinn_like_cudnn_conv2d", Typed<Conv2dArgs, false, CheckCudnnConv2d<false>>, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kConv2dChannelsLast,
                              {"cuDNN", "cinn_like_cudnn_conv2d_nhwc",
                               Typed<Conv2dArgs, false, CheckCudnnConv2d<true>>, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kConv2dBackwardData,
                              {"cuDNN", "cinn_like_cudnn_conv2d_backward_data",
                               Typed<Conv2dGradArgs, false, CheckCudnnConvBackward<1>>, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kConv2dBackwardFilter,
                              {"cuDNN", "cinn_like_cudnn_conv2d_backward_filter",
                               Typed<Conv2dGradArgs, false, CheckCudnnConvBackward<2>>, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kAttention,
                              {"cinn_like", "cinn_like_attention", nullptr, ""});
#ifdef CINN_LIKE_WITH_ONEDNN
  ir::RegisterLibraryFunction(
      Arch::kX86, LibraryCall::kMatmul,
      {"oneDNN", "cinn_like_dnnl_matmul", Typed<MatmulArgs, false, CheckDnnlMatmul<false>>, ""});
  ir::RegisterLibraryFunction(Arch::kX86, LibraryCall::kMatmulEpilogue,
                              {"oneDNN", "cinn_like_dnnl_matmul_epilogue",
                               Typed<MatmulArgs, true, CheckDnnlMatmul<true>>, ""});
  ir::RegisterLibraryFunction(
      Arch::kX86, LibraryCall::kConv2d,
      {"oneDNN", "cinn_like_dnnl_conv2d", Typed<Conv2dArgs, false, CheckDnnlConv2d<false>>, ""});
  ir::RegisterLibraryFunction(Arch::kX86, LibraryCall::kConv2dEpilogue,
                              {"oneDNN", "cinn_like_dnnl_conv2d_epilogue",
                               Typed<Conv2dArgs, true, CheckDnnlConv2d<true>>, ""});
#endif
  return true;
}();

}  // namespace
std::string LibraryEnvironment(const ir::Target& target, bool convolutions) {
  if (target.is_opencl()) return "no libraries";
  if (target.is_nvgpu()) {
#ifdef CINN_LIKE_WITH_CUDA
    if (!runtime::cuda::EnsureContext().ok()) return "device: no";
    if (!convolutions) return "device: yes";
    return absl::StrCat("device: yes; cuDNN: ",
                        runtime::cuda::GetCudnn().status.ok() ? "loads" : "unavailable");
#else
    return "no CUDA";
#endif
  }
#ifdef CINN_LIKE_WITH_ONEDNN
  auto dnnl = runtime::x86::DnnlVersion();
  return dnnl.ok() ? *dnnl : std::string("oneDNN unavailable");
#else
  return "no oneDNN";
#endif
}

}  // namespace cinn_like::backends
