/// \file Loading cuBLAS by dlopen and its one handle per process; the matmul extern.
#include "runtime/cuda/cublas.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/status_return.h"

namespace cinn_like::runtime::cuda {
namespace {

// The few cuBLAS entry points used, declared here so that no cuBLAS symbol is linked.
using Handle = void*;
using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, void*);
using SgemmFn = int (*)(Handle, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
using GemmStridedBatchedFn = int (*)(Handle, int, int, int, int, int, const void*, const void*, int,
                                     int, long long, const void*, int, int, long long, const void*,
                                     void*, int, int, long long, int, int, int);
using GemmExFn = int (*)(Handle, int, int, int, int, int, const void*, const void*, int, int,
                         const void*, int, int, const void*, void*, int, int, int, int);
// Enum values from cublas_api.h and library_types.h (CUDA 12 and 13 agree).
constexpr int kOpN = 0;              // CUBLAS_OP_N
constexpr int kOpT = 1;              // CUBLAS_OP_T
constexpr int kComputeF32 = 68;      // CUBLAS_COMPUTE_32F (true FP32, no TF32)
constexpr int kComputeF32Tf32 = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int kGemmDefault = -1;     // CUBLAS_GEMM_DEFAULT
constexpr int kCudaR32F = 0, kCudaR16F = 2, kCudaR16BF = 14;  // cudaDataType

struct Cublas {
  absl::Status status;
  Handle handle = nullptr;
  SetStreamFn set_stream = nullptr;
  SgemmFn sgemm = nullptr;
  GemmStridedBatchedFn gemm_strided_batched = nullptr;
  GemmExFn gemm_ex = nullptr;
};

Cublas Load() {
  Cublas out;
  auto opened = OpenCudaLibrary("cuBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
  if (!opened.ok()) {
    out.status = opened.status();
    return out;
  }
  void* lib = *opened;
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "cublasCreate_v2"));
  out.set_stream = reinterpret_cast<SetStreamFn>(dlsym(lib, "cublasSetStream_v2"));
  out.sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cublasSgemm_v2"));
  out.gemm_strided_batched =
      reinterpret_cast<GemmStridedBatchedFn>(dlsym(lib, "cublasGemmStridedBatchedEx"));
  out.gemm_ex = reinterpret_cast<GemmExFn>(dlsym(lib, "cublasGemmEx"));
  if (!create || !out.set_stream || !out.sgemm || !out.gemm_strided_batched || !out.gemm_ex) {
    out.status = absl::UnavailableError(
        "the loaded cuBLAS lacks cublasCreate_v2/SetStream/Sgemm/GemmEx/GemmStridedBatchedEx");
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
  int rc =
      cb.sgemm(cb.handle, kOpN, kOpN, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
               &one, b, static_cast<int>(n), a, static_cast<int>(k), &zero, c, static_cast<int>(n));
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cublasSgemm (m=", m, " n=", n, " k=", k, ") failed with status ", rc));
  }
  return absl::OkStatus();
}

namespace {

/// cuBLAS calls of one handle are serialized (the stream is a property of the handle).
std::mutex& CallMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

/// A device vector of at least `count` ones of the element type (`bits` 32: float32; 16: the
/// float16 or bfloat16 pattern `one16`), kept for the process: a bias is broadcast by the
/// rank-1 product ones x bias. Grown buffers are kept alive (calls in flight may read them).
absl::StatusOr<const void*> Ones(int dtype, int64_t count) {
  static std::map<int, std::pair<CUdeviceptr, int64_t>>* cache =
      new std::map<int, std::pair<CUdeviceptr, int64_t>>;
  auto& slot = (*cache)[dtype];
  if (slot.second >= count) return reinterpret_cast<const void*>(slot.first);
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  int64_t grown = std::max<int64_t>(count, 2 * slot.second);
  size_t elem = dtype == kCudaR32F ? 4 : 2;
  std::vector<uint8_t> host(grown * elem);
  for (int64_t i = 0; i < grown; ++i) {
    if (dtype == kCudaR32F) {
      float one = 1.f;
      std::memcpy(&host[i * 4], &one, 4);
    } else {
      uint16_t one = dtype == kCudaR16F ? 0x3C00 : 0x3F80;
      std::memcpy(&host[i * 2], &one, 2);
    }
  }
  CUdeviceptr p = 0;
  absl::Status st = CheckCu((*driver)->MemAlloc(&p, host.size()), "cuMemAlloc (matmul bias)");
  if (!st.ok()) return st;
  st = CheckCu((*driver)->MemcpyHtoD(p, host.data(), host.size()), "cuMemcpyHtoD (matmul bias)");
  if (!st.ok()) return st;
  slot = {p, grown};
  return reinterpret_cast<const void*>(p);
}

}  // namespace

int MatmulCudaDataType(int64_t dtype) {
  switch (dtype) {
    case kMatmulFloat32:
    case kMatmulFloat32Tf32:
      return kCudaR32F;
    case kMatmulFloat16:
      return kCudaR16F;
    case kMatmulBFloat16:
      return kCudaR16BF;
    default:
      return -1;
  }
}

int MatmulComputeType(int64_t dtype) {
  return dtype == kMatmulFloat32Tf32 ? kComputeF32Tf32 : kComputeF32;
}

absl::Status CublasMatmul(const MatmulArgs& a) {
  // The description is formatted only for an error: this is every call's path.
  auto what = [&] {
    return absl::StrCat("cuBLAS matmul (batch ", a.batch, ", m ", a.m, ", n ", a.n, ", k ", a.k,
                        ", trans_a ", a.trans_a, ", trans_b ", a.trans_b, ", dtype code ", a.dtype,
                        ")");
  };
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  int type = MatmulCudaDataType(a.dtype);
  if (type < 0) return absl::InvalidArgumentError(what() + ": unsupported dtype");
  if (a.batch < 0 || a.m < 0 || a.n < 0 || a.k < 0 || a.batch > kMax || a.m > kMax || a.n > kMax ||
      a.k > kMax || a.batch * a.m > kMax) {
    return absl::InvalidArgumentError(what() + ": sizes must be in [0, 2^31)");
  }
  if (a.batch == 0 || a.m == 0 || a.n == 0) return absl::OkStatus();
  const Cublas& cb = Get();
  if (!cb.status.ok()) {
    return absl::Status(cb.status.code(), what() + ": " + std::string(cb.status.message()));
  }
  std::lock_guard<std::mutex> lock(CallMutex());
  if (int rc = cb.set_stream(cb.handle, a.stream); rc != 0) {
    return absl::InternalError(absl::StrCat(what(), ": cublasSetStream failed with status ", rc));
  }
  const float one = 1.f, zero = 0.f;
  const float* beta = &zero;
  int m = static_cast<int>(a.m), n = static_cast<int>(a.n), k = static_cast<int>(a.k);
  if (a.bias) {
    // C[batch * m, n] = ones[batch * m] x bias[n] (column-major: C^T = bias x ones^T), then
    // the product accumulates onto it.
    auto ones = Ones(type, a.batch * a.m);
    if (!ones.ok()) {
      return absl::InternalError(what() + ": " + std::string(ones.status().message()));
    }
    int rows = static_cast<int>(a.batch * a.m);
    // True float32 even where the product may take TF32: the bias is no operand of it.
    int rc = cb.gemm_ex(cb.handle, kOpN, kOpN, n, rows, 1, &one, a.bias, type, n, *ones, type, 1,
                        &zero, a.c, type, n, kComputeF32, kGemmDefault);
    if (rc != 0) {
      return absl::InternalError(
          absl::StrCat(what(), ": cublasGemmEx (bias) failed with status ", rc));
    }
    beta = &one;
  }
  if (a.k == 0) {
    return a.bias ? absl::OkStatus()
                  : absl::InvalidArgumentError(what() + ": k 0 without bias is not supported");
  }
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B first, m and n swapped.
  int lda = a.trans_a ? m : k;
  int ldb = a.trans_b ? k : n;
  int rc = cb.gemm_strided_batched(cb.handle, a.trans_b ? kOpT : kOpN, a.trans_a ? kOpT : kOpN, n,
                                   m, k, &one, a.b, type, ldb, a.batch_stride_b, a.a, type, lda,
                                   a.batch_stride_a, beta, a.c, type, n,
                                   static_cast<long long>(a.m) * a.n, static_cast<int>(a.batch),
                                   MatmulComputeType(a.dtype), kGemmDefault);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat(what(), ": cublasGemmStridedBatchedEx failed with status ", rc));
  }
  return absl::OkStatus();
}

MatmulArgs MatmulArgsOf(const void* a, const void* b, const void* bias, void* c,
                        const MatmulArgList<int64_t>& args, void* stream) {
  MatmulArgs out{};
  out.a = a;
  out.b = b;
  out.bias = args.has_bias ? bias : nullptr;
  out.c = c;
  SetMatmulSizes(args, out);
  out.stream = stream;
  return out;
}

}  // namespace cinn_like::runtime::cuda

extern "C" int cinn_like_cublas_matmul(const void* a, const void* b, const void* bias, void* c,
                                       CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM) void* stream) {
  namespace cu = cinn_like::runtime::cuda;
  const cinn_like::runtime::MatmulArgList<int64_t> args{CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_VALUE)};
  return cinn_like::runtime::ReturnStatus(
      cu::CublasMatmul(cu::MatmulArgsOf(a, b, bias, c, args, stream)));
}
