/// \file Loading cuBLAS by dlopen and its one handle per process.
#include "runtime/cuda/cublas.h"

#include <dlfcn.h>

#include <limits>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_driver.h"

namespace cinn_like::runtime::cuda {
namespace {

// The few cuBLAS entry points used, declared here so that no cuBLAS symbol is linked.
using Handle = void*;
using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, void*);
using SgemmFn = int (*)(Handle, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
constexpr int kOpN = 0;  // CUBLAS_OP_N

struct Cublas {
  absl::Status status;
  Handle handle = nullptr;
  SetStreamFn set_stream = nullptr;
  SgemmFn sgemm = nullptr;
};

Cublas Load() {
  Cublas out;
  absl::Status ctx = EnsureContext();  // cuBLAS adopts the current (primary) context
  if (!ctx.ok()) {
    out.status = ctx;
    return out;
  }
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* why = dlerror();
    absl::StrAppend(&tried, tried.empty() ? "" : "; ", why ? why : name);
  }
  if (!lib) {
    out.status = absl::UnavailableError("cuBLAS could not be loaded: " + tried);
    return out;
  }
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "cublasCreate_v2"));
  out.set_stream = reinterpret_cast<SetStreamFn>(dlsym(lib, "cublasSetStream_v2"));
  out.sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cublasSgemm_v2"));
  if (!create || !out.set_stream || !out.sgemm) {
    out.status = absl::UnavailableError("the loaded cuBLAS lacks cublasCreate_v2/SetStream/Sgemm");
    return out;
  }
  if (int rc = create(&out.handle); rc != 0) {
    out.status = absl::InternalError(absl::StrCat("cublasCreate failed with status ", rc));
  }
  return out;
}

const Cublas& Get() {
  static std::once_flag once;
  static Cublas* cublas = nullptr;
  std::call_once(once, [] { cublas = new Cublas(Load()); });
  return *cublas;
}

}  // namespace

absl::Status CublasSgemmRowMajor(const float* a, const float* b, float* c, int64_t m, int64_t n,
                                 int64_t k, void* stream) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (m <= 0 || n <= 0 || k <= 0 || m > kMax || n > kMax || k > kMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("sgemm: sizes m=", m, " n=", n, " k=", k, " must be in [1, 2^31)"));
  }
  const Cublas& cb = Get();
  if (!cb.status.ok()) return cb.status;
  if (int rc = cb.set_stream(cb.handle, stream); rc != 0) {
    return absl::InternalError(absl::StrCat("cublasSetStream failed with status ", rc));
  }
  // Row-major C = A B is column-major C^T = B^T A^T: pass B first, swap m and n.
  const float one = 1.f, zero = 0.f;
  int rc = cb.sgemm(cb.handle, kOpN, kOpN, static_cast<int>(n), static_cast<int>(m),
                    static_cast<int>(k), &one, b, static_cast<int>(n), a, static_cast<int>(k),
                    &zero, c, static_cast<int>(n));
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cublasSgemm (m=", m, " n=", n, " k=", k, ") failed with status ", rc));
  }
  return absl::OkStatus();
}

}  // namespace cinn_like::runtime::cuda
