/// \file The warm-up thread.
#include "cinn_like/warm_up.h"

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

/// The warm-up thread, joined when the process ends (never left running into static
/// destruction).
struct WarmUpThread {
  std::thread thread;
  ~WarmUpThread() {
    if (thread.joinable()) thread.join();
  }
};

}  // namespace

void WarmUp(const ir::Target& target) {
#ifdef CINN_LIKE_WITH_CUDA
  if (!target.is_gpu()) return;
  static std::once_flag once;
  static WarmUpThread warm_up;
  std::call_once(once, [] {
    auto driver = runtime::cuda::Driver();
    if (!driver.ok()) return;
    CUcontext context = nullptr;
    (*driver)->CtxGetCurrent(&context);
    if (context == nullptr) return;  // no device in use yet: nothing to load for
    try {
      warm_up.thread = std::thread([context, d = *driver] {
        d->CtxSetCurrent(context);
        (void)runtime::cuda::LoadCublasLt();
        (void)runtime::cuda::GetCudnn();
        // NVRTC loads its builtins at its first compile.
        backends::nvrtc::Compiler nvrtc;
        (void)nvrtc.Compile("extern \"C\" __global__ void cinn_like_warm_up() {}\n", 75,
                            /*to_cubin=*/false, "cinn_like_warm_up");
      });
    } catch (const std::system_error&) {  // no thread: the compile loads them
    }
  });
#else
  (void)target;
#endif
}

}  // namespace cinn_like
