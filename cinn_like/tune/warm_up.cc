/// \file The warm-up thread.
#include "cinn_like/tune/warm_up.h"

#include <mutex>
#include <system_error>
#include <thread>

#ifdef CINN_LIKE_WITH_CUDA
#include "backends/cuda/nvrtc_compiler.h"
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cudnn_library.h"
#endif

namespace cinn_like {
namespace {

/// The warm-up thread, started once; joined by the first compile after it (FinishWarmUp), or
/// at the latest when the process ends.
struct WarmUpThread {
  std::mutex mu;
  bool started = false;
  std::thread thread;
  ~WarmUpThread() {
    if (thread.joinable()) thread.join();
  }
};

WarmUpThread& TheWarmUp() {
  static WarmUpThread warm_up;
  return warm_up;
}

}  // namespace

void WarmUp(const ir::Target& target) {
#ifdef CINN_LIKE_WITH_CUDA
  if (!target.is_nvgpu()) return;
  WarmUpThread& w = TheWarmUp();
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.started) return;
  w.started = true;
  auto driver = runtime::cuda::Driver();
  if (!driver.ok()) return;
  CUcontext context = nullptr;
  (*driver)->CtxGetCurrent(&context);
  if (context == nullptr) return;  // no device in use yet: nothing to load for
  try {
    w.thread = std::thread([context, d = *driver] {
      d->CtxSetCurrent(context);
      // cuBLASLt's first heuristic query in a process costs far more than later ones: asked
      // here, for a small matmul with a bias, it is not a compile's library check.
      if (runtime::cuda::LoadCublasLt().ok()) {
        runtime::cuda::MatmulArgs small{};
        small.bias = &small;  // any pointer: the epilogue adds a bias
        small.batch = 1, small.m = small.n = small.k = 128;
        small.batch_stride_a = small.batch_stride_b = 128 * 128;
        (void)runtime::cuda::CublasLtCheck(small, /*activation=*/0);
      }
      (void)runtime::cuda::GetCudnn();
      // NVRTC loads its builtins at its first compile.
      backends::nvrtc::Compiler nvrtc;
      (void)nvrtc.Compile("extern \"C\" __global__ void cinn_like_warm_up() {}\n", 75,
                          /*to_cubin=*/false, "cinn_like_warm_up");
    });
  } catch (const std::system_error&) {  // no thread: the compile loads them
  }
#else
  (void)target;
#endif
}

void FinishWarmUp() {
  WarmUpThread& w = TheWarmUp();
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.thread.joinable()) w.thread.join();
}

}  // namespace cinn_like
