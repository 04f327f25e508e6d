/// \file Loading cuDNN 9 by dlopen and its one handle per process.
#include "runtime/cuda/cudnn_library.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_driver.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace cinn_like::runtime::cuda {
namespace {

/// libcudnn.so.9 from the loader's path, the toolkit or PyTorch's wheel. The cuDNN 9 shim
/// loads its sub-libraries by name, so those next to it are loaded first (global).
void* OpenCudnn(std::string* tried) {
  std::vector<std::string> dirs{"", "/usr/local/cuda/lib64/"};
  for (const char* py : {"3.12", "3.11", "3.10", "3.13"}) {
    dirs.push_back(
        absl::StrCat("/opt/torch/.venv/lib/python", py, "/site-packages/nvidia/cudnn/lib/"));
  }
  for (const std::string& dir : dirs) {
    std::string path = dir + "libcudnn.so.9";
    if (!dir.empty()) {
      for (const char* sub : {"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9",
                              "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9",
                              "libcudnn_ops.so.9", "libcudnn_cnn.so.9"}) {
        dlopen((dir + sub).c_str(), RTLD_NOW | RTLD_GLOBAL);  // absent ones are fine
      }
    }
    if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) return lib;
    const char* why = dlerror();
    absl::StrAppend(tried, tried->empty() ? "" : "; ", why ? why : path);
  }
  return nullptr;
}

Cudnn Load() {
  Cudnn out;
  absl::Status ctx = EnsureContext();
  if (!ctx.ok()) {
    out.status = ctx;
    return out;
  }
  std::string tried;
  void* lib = OpenCudnn(&tried);
  if (!lib) {
    out.status = absl::UnavailableError("cuDNN 9 could not be loaded: " + tried +
                                        "; run with FLAGS_cinn_like_extern_libs=false to use "
                                        "generated convolution kernels");
    return out;
  }
#define CINN_LIKE_RESOLVE(fn)                                           \
  out.fn = reinterpret_cast<decltype(&::fn)>(dlsym(lib, #fn));          \
  if (!out.fn) {                                                        \
    out.status = absl::UnavailableError("the loaded cuDNN lacks " #fn); \
    return out;                                                         \
  }
  CINN_LIKE_CUDNN_FUNCTIONS(CINN_LIKE_RESOLVE)
#undef CINN_LIKE_RESOLVE
  if (cudnnStatus_t rc = out.cudnnCreate(&out.handle); rc != CUDNN_STATUS_SUCCESS) {
    out.status =
        absl::InternalError(absl::StrCat("cudnnCreate failed: ", out.cudnnGetErrorString(rc)));
  }
  return out;
}

}  // namespace

const Cudnn& GetCudnn() {
  static std::once_flag once;
  static Cudnn* cudnn = nullptr;
  std::call_once(once, [] { cudnn = new Cudnn(Load()); });
  return *cudnn;
}

absl::Status CudnnCheck(const Cudnn& dnn, cudnnStatus_t rc, const std::string& what,
                        const char* call) {
  if (rc == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", call, " failed: ", dnn.cudnnGetErrorString(rc)));
}

}  // namespace cinn_like::runtime::cuda
