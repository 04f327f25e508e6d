/// \file The library calls a target offers the extern computes (hlir/ops/*_extern.cc,
/// attention_kernel.cc): per kind of call, the runtime function JIT host code calls (cuBLAS and
/// cuDNN on NVGPU, oneDNN on x86) and, where the library can tell at compile time, whether it
/// takes a configuration. Backends register what their target has
/// (backends/library_functions.cc); an extern compute asks here, so that one compute serves
/// every library with the same argument list and no op compares target kinds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/target.h"

namespace cinn_like::ir {

/// The calls, each with one C argument list every library's function shares: its pointers,
/// then its integers, whose struct and order are ir/library_calls.h's.
enum class LibraryCall : uint8_t {
  /// int f(a, b, bias, c, MatmulArgs (no activation)..., stream): runtime/cuda/cublas.h,
  /// runtime/x86/onednn.h.
  kMatmul,
  /// kMatmul's with the activation, applied after the bias as the GEMM's epilogue:
  /// runtime/cuda/cublaslt.h (hlir/pass/matmul_epilogue.h makes such matmuls).
  kMatmulEpilogue,
  /// int f(x, w, bias, y, Conv2dArgs (no activation)..., stream): runtime/cuda/cudnn.h.
  kConv2d,
  /// The same arguments for channels-last tensors: x [n, h, w, c], w [k, r, s, c / groups],
  /// y [n, out_h, out_w, k] (hlir/pass/conv_layout.h makes such convolutions on NVGPU).
  kConv2dChannelsLast,
  /// kConv2d's with the activation, applied after the bias by the convolution itself:
  /// runtime/x86/onednn.h's post-ops (hlir/pass/matmul_epilogue.h's FoldConvEpilogue makes
  /// such convolutions on x86).
  kConv2dEpilogue,
  /// The gradients of kConv2d's convolution (hlir/ops/conv_backward.cc), NCHW, no bias:
  /// int f(dy, w, dx, Conv2dGradArgs..., stream) (runtime/cuda/cudnn.h).
  kConv2dBackwardData,
  /// int f(x, dy, dw, Conv2dGradArgs..., stream).
  kConv2dBackwardFilter,
  /// The fused attention kernel, a library kernel the backend adds to the device module
  /// (hlir/ops/attention_kernel.cc); no integer arguments are checked.
  kAttention,
};
const char* LibraryCallName(LibraryCall call);

/// An integer argument known only at the call (a symbolic dim, or a product with one).
inline constexpr int64_t kArgAtCall = -1;

/// Whether the library takes a configuration: the call's integer arguments after its pointers,
/// in order (kArgAtCall where not known at compile time). What will run it ("oneDNN 2.6.3
/// brg:avx512_core"), or why not (the library cannot be loaded, or refuses the shapes or the
/// dtype).
using LibraryCheck = std::function<absl::StatusOr<std::string>(const std::vector<int64_t>& args)>;

struct LibraryFunction {
  std::string library;   // "cuBLAS", "oneDNN": for messages and the tactics dump
  std::string function;  // the runtime C function JIT code calls, "cinn_like_dnnl_matmul"
  LibraryCheck check;    // null: only the call checks (cuBLAS: no GPU at compile time)
  std::string checked;   // set by FindLibraryFunction: what the check said will run
};

/// Registers `call` for targets of `arch` (one per pair; a later one replaces it).
void RegisterLibraryFunction(Target::Arch arch, LibraryCall call, LibraryFunction function);

/// The function for `call` on `target` that takes `args`: NotFound naming the call and the
/// target when none is registered; the check's error when the library declines.
absl::StatusOr<LibraryFunction> FindLibraryFunction(const Target& target, LibraryCall call,
                                                    const std::vector<int64_t>& args);

/// Milliseconds the calling thread has spent in library checks (loading a library, making a
/// plan), a running total: a compile's share is the difference across it (CompileProgram lowers
/// on its calling thread; a check run on another thread would count there).
double LibraryCheckMilliseconds();

}  // namespace cinn_like::ir
