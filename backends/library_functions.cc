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

#include <glog/logging.h>

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#ifdef CINN_LIKE_WITH_ONEDNN
#include "runtime/x86/onednn.h"
#endif
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cudnn.h"
#include "runtime/cuda/cudnn_library.h"
#endif

namespace cinn_like::backends {
namespace {

using ir::kArgAtCall;

/// The plain calls take 10 (matmul) or 18 (conv2d) integers, those with an epilogue one more.
template <size_t kCount, absl::StatusOr<std::string> (*kCheck)(const std::vector<int64_t>&)>
absl::StatusOr<std::string> Exactly(const std::vector<int64_t>& v) {
  if (v.size() != kCount) {
    return absl::InternalError(absl::StrCat("the extern takes ", kCount, " integer arguments"));
  }
  return kCheck(v);
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

/// The conv2d extern's 18 integers (has_bias, dtype, n, c, h, w, k, r, s, out_h, out_w, pad_h,
/// pad_w, stride_h, stride_w, dilation_h, dilation_w, groups; `channels_last`: NHWC tensors):
/// dtype codes cuDNN takes (runtime/cuda/cudnn.h) are float32 and float16; then CheckCudnnPlan.
template <bool channels_last>
absl::StatusOr<std::string> CheckCudnnConv2d(const std::vector<int64_t>& v) {
  const int64_t dtype = v[1];
  if (dtype != 0 && dtype != 1) {
    return absl::UnimplementedError(
        absl::StrCat("the cuDNN conv2d extern takes float32 and float16, not dtype code ", dtype));
  }
#ifdef CINN_LIKE_WITH_CUDA
  runtime::cuda::Conv2dArgs a{};
  a.bias = v[0] ? &a : nullptr;  // any non-null pointer: the call adds a bias
  a.dtype = v[1];
  a.n = v[2], a.c = v[3], a.h = v[4], a.w_dim = v[5], a.k = v[6], a.r = v[7], a.s = v[8];
  a.out_h = v[9], a.out_w = v[10], a.pad_h = v[11], a.pad_w = v[12];
  a.stride_h = v[13], a.stride_w = v[14], a.dilation_h = v[15], a.dilation_w = v[16];
  a.groups = v[17];
  a.channels_last = channels_last;
  return CheckCudnnPlan(a, v);
#else
  return std::string("cuDNN");
#endif
}

/// The conv2d gradients' 17 integers (dtype, n, c, h, w, k, r, s, out_h, out_w, pad_h, pad_w,
/// stride_h, stride_w, dilation_h, dilation_w, groups), as CheckCudnnConv2d's. `direction`:
/// runtime/cuda/cudnn.h's ConvDirection, 1 backward data, 2 backward filter.
template <int64_t direction>
absl::StatusOr<std::string> CheckCudnnConvBackward(const std::vector<int64_t>& v) {
  if (v[0] != 0 && v[0] != 1) {
    return absl::UnimplementedError(
        absl::StrCat("the cuDNN conv2d gradients take float32 and float16, not dtype code ", v[0]));
  }
#ifdef CINN_LIKE_WITH_CUDA
  runtime::cuda::Conv2dArgs a{};
  a.dtype = v[0];
  a.n = v[1], a.c = v[2], a.h = v[3], a.w_dim = v[4], a.k = v[5], a.r = v[6], a.s = v[7];
  a.out_h = v[8], a.out_w = v[9], a.pad_h = v[10], a.pad_w = v[11];
  a.stride_h = v[12], a.stride_w = v[13], a.dilation_h = v[14], a.dilation_w = v[15];
  a.groups = v[16];
  a.direction = direction;
  return CheckCudnnPlan(a, v);
#else
  return std::string("cuDNN");
#endif
}

/// has_bias, dtype, batch, m, n, k, trans_a, trans_b, batch_stride_a, batch_stride_b,
/// activation. Where this machine has a GPU, cuBLASLt must load and, for static sizes, its
/// heuristic must have an algorithm (else the generated kernel runs, not a call that fails).
absl::StatusOr<std::string> CheckCublasLtMatmul(const std::vector<int64_t>& v) {
  if (v.size() != 11) {
    return absl::InternalError("the matmul epilogue extern takes 11 integer arguments");
  }
  if (v[1] != 0 && v[1] != 1 && v[1] != 2) {
    return absl::UnimplementedError(absl::StrCat(
        "the cuBLASLt matmul takes float32, float16 and bfloat16, not dtype code ", v[1]));
  }
  if (v[10] < 0 || v[10] > 2) {
    return absl::UnimplementedError(absl::StrCat("no cuBLASLt epilogue for activation ", v[10]));
  }
#ifdef CINN_LIKE_WITH_CUDA
  if (runtime::cuda::EnsureContext().ok()) {
    runtime::cuda::MatmulArgs a{};
    a.bias = v[0] ? &a : nullptr;  // any non-null pointer: the epilogue adds a bias
    a.dtype = v[1];
    a.batch = v[2], a.m = v[3], a.n = v[4], a.k = v[5];
    a.trans_a = v[6] != 0, a.trans_b = v[7] != 0;
    // A batch stride is 0 (a broadcast operand) or its matrix's size.
    a.batch_stride_a = v[8] == kArgAtCall ? a.m * a.k : v[8];
    a.batch_stride_b = v[9] == kArgAtCall ? a.k * a.n : v[9];
    return runtime::cuda::CublasLtCheck(a, v[10]);
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

/// has_bias, dtype, batch, m, n, k, trans_a, trans_b, batch_stride_a, batch_stride_b, and
/// with an epilogue (11 arguments) activation; the count is checked by Exactly.
absl::StatusOr<std::string> CheckDnnlMatmul(const std::vector<int64_t>& v) {
  runtime::x86::DnnlMatmulArgs a{};
  a.bias = v[0] ? &a : nullptr;  // any non-null pointer: the primitive takes a bias
  a.dtype = v[1];
  a.batch = Sized(v[2]);
  a.m = Sized(v[3]);
  a.n = Sized(v[4]);
  a.k = Sized(v[5]);
  a.trans_a = v[6] != 0;
  a.trans_b = v[7] != 0;
  // A batch stride is 0 (a broadcast operand) or its matrix's size.
  a.batch_stride_a = v[8] == kArgAtCall ? a.m * a.k : v[8];
  a.batch_stride_b = v[9] == kArgAtCall ? a.k * a.n : v[9];
  if (v.size() == 11) {
    a.activation = v[10];
    // C = activation(bias) where k = 0, which the extern refuses: a static k = 0, or one known
    // only at the call, runs the generated kernel.
    if (a.activation != 0 && (v[5] == 0 || v[5] == kArgAtCall)) {
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

/// has_bias, dtype, n, c, h, w, k, r, s, out_h, out_w, pad_h, pad_w, stride_h, stride_w,
/// dilation_h, dilation_w, groups, and with an epilogue (19 arguments) activation; the count
/// is checked by Exactly.
absl::StatusOr<std::string> CheckDnnlConv2d(const std::vector<int64_t>& v) {
  runtime::x86::DnnlConv2dArgs a{};
  a.bias = v[0] ? &a : nullptr;
  a.dtype = v[1];
  a.n = Sized(v[2]);
  a.c = Sized(v[3]);
  a.h = v[4];
  a.w_dim = v[5];
  a.k = Sized(v[6]);
  a.r = Sized(v[7]);
  a.s = Sized(v[8]);
  a.out_h = v[9];
  a.out_w = v[10];
  a.pad_h = v[11];
  a.pad_w = v[12];
  a.stride_h = v[13];
  a.stride_w = v[14];
  a.dilation_h = v[15];
  a.dilation_w = v[16];
  a.groups = v[17];
  if (v.size() == 19) a.activation = v[18];
  StandInSpatial(&a.h, &a.out_h, a.r, a.pad_h, a.stride_h, a.dilation_h);
  StandInSpatial(&a.w_dim, &a.out_w, a.s, a.pad_w, a.stride_w, a.dilation_w);
  return Logged(runtime::x86::DnnlPrepareConv2d(a));
}
#endif

const bool kRegistered = [] {
  using Arch = ir::Target::Arch;
  using ir::LibraryCall;
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kMatmul,
                              {"cuBLAS", "cinn_like_cublas_matmul", nullptr, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kMatmulEpilogue,
                              {"cuBLASLt", "cinn_like_cublaslt_matmul", CheckCublasLtMatmul, ""});
  ir::RegisterLibraryFunction(
      Arch::kNVGPU, LibraryCall::kConv2d,
      {"cuDNN", "cinn_like_cudnn_conv2d", Exactly<18, CheckCudnnConv2d<false>>, ""});
  ir::RegisterLibraryFunction(
      Arch::kNVGPU, LibraryCall::kConv2dChannelsLast,
      {"cuDNN", "cinn_like_cudnn_conv2d_nhwc", Exactly<18, CheckCudnnConv2d<true>>, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kConv2dBackwardData,
                              {"cuDNN", "cinn_like_cudnn_conv2d_backward_data",
                               Exactly<17, CheckCudnnConvBackward<1>>, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kConv2dBackwardFilter,
                              {"cuDNN", "cinn_like_cudnn_conv2d_backward_filter",
                               Exactly<17, CheckCudnnConvBackward<2>>, ""});
  ir::RegisterLibraryFunction(Arch::kNVGPU, LibraryCall::kAttention,
                              {"cinn_like", "cinn_like_attention", nullptr, ""});
#ifdef CINN_LIKE_WITH_ONEDNN
  ir::RegisterLibraryFunction(
      Arch::kX86, LibraryCall::kMatmul,
      {"oneDNN", "cinn_like_dnnl_matmul", Exactly<10, CheckDnnlMatmul>, ""});
  ir::RegisterLibraryFunction(
      Arch::kX86, LibraryCall::kMatmulEpilogue,
      {"oneDNN", "cinn_like_dnnl_matmul_epilogue", Exactly<11, CheckDnnlMatmul>, ""});
  ir::RegisterLibraryFunction(
      Arch::kX86, LibraryCall::kConv2d,
      {"oneDNN", "cinn_like_dnnl_conv2d", Exactly<18, CheckDnnlConv2d>, ""});
  ir::RegisterLibraryFunction(
      Arch::kX86, LibraryCall::kConv2dEpilogue,
      {"oneDNN", "cinn_like_dnnl_conv2d_epilogue", Exactly<19, CheckDnnlConv2d>, ""});
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
