/// \file cuBLASLt loaded by dlopen, its plans per configuration, the epilogue extern.
#include "runtime/cuda/cublaslt.h"

#include <dlfcn.h>

#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/device_workspace.h"
#include "runtime/status_return.h"

namespace cinn_like::runtime::cuda {
namespace {

// The cuBLASLt entry points used, declared here so that no cuBLAS symbol is linked; handles
// and descriptors are opaque pointers. Layouts and values from cublasLt.h (CUDA 12 and 13).
using Opaque = void*;
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  size_t workspace_bytes;
  int state;
  float waves;
  int reserved[4];
};
using CreateFn = int (*)(Opaque*);
using DescCreateFn = int (*)(Opaque*, int compute, int scale);
using SetAttrFn = int (*)(Opaque, int attr, const void* value, size_t bytes);
using LayoutCreateFn = int (*)(Opaque*, int type, uint64_t rows, uint64_t cols, int64_t ld);
using HeuristicFn = int (*)(Opaque handle, Opaque desc, Opaque a, Opaque b, Opaque c, Opaque d,
                            Opaque pref, int requested, HeuristicResult* results, int* returned);
using MatmulFn = int (*)(Opaque handle, Opaque desc, const void* alpha, const void* a, Opaque la,
                         const void* b, Opaque lb, const void* beta, const void* c, Opaque lc,
                         void* d, Opaque ld, const Algo* algo, void* workspace, size_t ws_bytes,
                         void* stream);
using StatusNameFn = const char* (*)(int);

constexpr int kOpN = 0, kOpT = 1;  // cublasOperation_t
constexpr int kCudaR32F = 0;       // cudaDataType (the scale type)
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8,
              kDescBiasBatchStride = 10;                      // cublasLtMatmulDescAttributes_t
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;  // cublasLtMatrixLayoutAttribute_t
constexpr int kPrefMaxWorkspace = 1, kPrefAlignA = 5, kPrefAlignB = 6, kPrefAlignC = 7,
              kPrefAlignD = 8;  // cublasLtMatmulPreferenceAttributes_t
constexpr uint32_t kEpilogueDefault = 1, kEpilogueRelu = 2, kEpilogueBias = 4, kEpilogueGelu = 32;

/// Algorithms needing a larger workspace are not considered.
constexpr uint64_t kMaxWorkspaceBytes = uint64_t{32} << 20;

struct Lt {
  absl::Status status;
  Opaque handle = nullptr;
  DescCreateFn desc_create = nullptr;
  SetAttrFn desc_set = nullptr;
  LayoutCreateFn layout_create = nullptr;
  SetAttrFn layout_set = nullptr;
  CreateFn pref_create = nullptr;
  SetAttrFn pref_set = nullptr;
  HeuristicFn heuristic = nullptr;
  MatmulFn matmul = nullptr;
  StatusNameFn status_name = nullptr;

  std::string Name(int rc) const {
    const char* name = status_name ? status_name(rc) : nullptr;
    return name ? std::string(name) : absl::StrCat("status ", rc);
  }
};

Lt Load() {
  Lt out;
  auto opened =
      OpenCudaLibrary("cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
  if (!opened.ok()) {
    out.status = opened.status();
    return out;
  }
  void* lib = *opened;
  auto sym = [&](const char* name) { return dlsym(lib, name); };
  auto create = reinterpret_cast<CreateFn>(sym("cublasLtCreate"));
  out.desc_create = reinterpret_cast<DescCreateFn>(sym("cublasLtMatmulDescCreate"));
  out.desc_set = reinterpret_cast<SetAttrFn>(sym("cublasLtMatmulDescSetAttribute"));
  out.layout_create = reinterpret_cast<LayoutCreateFn>(sym("cublasLtMatrixLayoutCreate"));
  out.layout_set = reinterpret_cast<SetAttrFn>(sym("cublasLtMatrixLayoutSetAttribute"));
  out.pref_create = reinterpret_cast<CreateFn>(sym("cublasLtMatmulPreferenceCreate"));
  out.pref_set = reinterpret_cast<SetAttrFn>(sym("cublasLtMatmulPreferenceSetAttribute"));
  out.heuristic = reinterpret_cast<HeuristicFn>(sym("cublasLtMatmulAlgoGetHeuristic"));
  out.matmul = reinterpret_cast<MatmulFn>(sym("cublasLtMatmul"));
  out.status_name = reinterpret_cast<StatusNameFn>(sym("cublasLtGetStatusName"));
  if (!create || !out.desc_create || !out.desc_set || !out.layout_create || !out.layout_set ||
      !out.pref_create || !out.pref_set || !out.heuristic || !out.matmul) {
    out.status = absl::UnavailableError("the loaded cuBLASLt lacks an entry point it needs");
    return out;
  }
  if (int rc = create(&out.handle); rc != 0) {
    out.status = absl::InternalError("cublasLtCreate failed: " + out.Name(rc));
  }
  return out;
}

const Lt& Get() {
  static std::once_flag once;
  static Lt* lt = nullptr;
  std::call_once(once, [] { lt = new Lt(Load()); });
  return *lt;
}

uint32_t Epilogue(bool bias, int64_t activation) {
  uint32_t e = activation == kActivationRelu       ? kEpilogueRelu
               : activation == kActivationGeluTanh ? kEpilogueGelu
                                                   : 0;
  if (bias) e |= kEpilogueBias;
  return e ? e : kEpilogueDefault;
}

/// What a plan depends on: the configuration and the pointers' alignment.
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool, int64_t, int64_t,
                       bool, int64_t, int64_t>;

/// The descriptors of one configuration and the heuristic's algorithm, kept for the process
/// (never destroyed: calls in flight on other threads may hold them).
struct Plan {
  Opaque desc = nullptr, layout_a = nullptr, layout_b = nullptr, layout_c = nullptr;
  Algo algo{};
  size_t workspace_bytes = 0;
};

std::string Describe(const MatmulArgs& a, int64_t activation) {
  const char* act = activation == kActivationRelu       ? "relu"
                    : activation == kActivationGeluTanh ? "gelu_tanh"
                                                        : "none";
  return absl::StrCat("cuBLASLt matmul (batch ", a.batch, ", m ", a.m, ", n ", a.n, ", k ", a.k,
                      ", trans_a ", a.trans_a, ", trans_b ", a.trans_b, ", dtype code ", a.dtype,
                      ", bias ", a.bias != nullptr, ", activation ", act, ")");
}

/// The byte alignment a plan assumes of the pointers (at most 16).
int64_t Alignment(const MatmulArgs& a) {
  auto bits = reinterpret_cast<uintptr_t>(a.a) | reinterpret_cast<uintptr_t>(a.b) |
              reinterpret_cast<uintptr_t>(a.c) | reinterpret_cast<uintptr_t>(a.bias) | 16;
  return static_cast<int64_t>(bits & (~bits + 1));  // the lowest set bit
}

/// The plan for `a` at pointer alignment `align`: row-major C = op(A) op(B) is column-major
/// C^T = op(B)^T op(A)^T, so cuBLASLt's first operand is B and m, n swap; the bias (one value
/// per row of the column-major result) is then per column of C, as PyTorch's bias is.
absl::StatusOr<std::unique_ptr<Plan>> MakePlan(const Lt& lt, const MatmulArgs& a,
                                               int64_t activation, int64_t align) {
  const int type = MatmulCudaDataType(a.dtype);
  auto failed = [&](const char* step, int rc) {
    return absl::UnimplementedError(
        absl::StrCat(Describe(a, activation), ": ", step, ": ", lt.Name(rc)));
  };
  auto plan = std::make_unique<Plan>();
  if (int rc = lt.desc_create(&plan->desc, MatmulComputeType(a.dtype), kCudaR32F); rc != 0) {
    return failed("cublasLtMatmulDescCreate", rc);
  }
  const int32_t op_first = a.trans_b ? kOpT : kOpN, op_second = a.trans_a ? kOpT : kOpN;
  const uint32_t epilogue = Epilogue(a.bias != nullptr, activation);
  const int64_t no_bias_stride = 0;
  if (int rc = lt.desc_set(plan->desc, kDescTransA, &op_first, sizeof(op_first)) |
               lt.desc_set(plan->desc, kDescTransB, &op_second, sizeof(op_second)) |
               lt.desc_set(plan->desc, kDescEpilogue, &epilogue, sizeof(epilogue)) |
               lt.desc_set(plan->desc, kDescBiasBatchStride, &no_bias_stride, sizeof(int64_t));
      rc != 0) {
    return failed("cublasLtMatmulDescSetAttribute", rc);
  }
  const uint64_t m = a.m, n = a.n, k = a.k;
  auto layout = [&](Opaque* out, uint64_t rows, uint64_t cols, int64_t stride) -> int {
    int rc = lt.layout_create(out, type, rows, cols, static_cast<int64_t>(rows));
    if (rc != 0 || a.batch == 1) return rc;
    const int32_t count = static_cast<int32_t>(a.batch);
    return lt.layout_set(*out, kLayoutBatchCount, &count, sizeof(count)) |
           lt.layout_set(*out, kLayoutBatchStride, &stride, sizeof(stride));
  };
  // Each operand as stored, column-major: B is n x k (k x n when transposed), A k x m (m x k).
  if (int rc = layout(&plan->layout_a, a.trans_b ? k : n, a.trans_b ? n : k, a.batch_stride_b) |
               layout(&plan->layout_b, a.trans_a ? m : k, a.trans_a ? k : m, a.batch_stride_a) |
               layout(&plan->layout_c, n, m, a.m * a.n);
      rc != 0) {
    return failed("cublasLtMatrixLayoutCreate", rc);
  }
  Opaque pref = nullptr;
  if (int rc = lt.pref_create(&pref); rc != 0) return failed("cublasLtMatmulPreferenceCreate", rc);
  const uint64_t max_ws = kMaxWorkspaceBytes;
  const uint32_t al = static_cast<uint32_t>(align);
  int rc = lt.pref_set(pref, kPrefMaxWorkspace, &max_ws, sizeof(max_ws));
  for (int attr : {kPrefAlignA, kPrefAlignB, kPrefAlignC, kPrefAlignD}) {
    rc |= lt.pref_set(pref, attr, &al, sizeof(al));
  }
  if (rc != 0) return failed("cublasLtMatmulPreferenceSetAttribute", rc);
  if (a.bias) {
    // The heuristic infers the bias's alignment from the pointer set: one of the plan's.
    const void* aligned = reinterpret_cast<const void*>(static_cast<uintptr_t>(align));
    if (int rc = lt.desc_set(plan->desc, kDescBiasPointer, &aligned, sizeof(aligned)); rc != 0) {
      return failed("cublasLtMatmulDescSetAttribute (bias)", rc);
    }
  }
  HeuristicResult result{};
  int returned = 0;
  rc = lt.heuristic(lt.handle, plan->desc, plan->layout_a, plan->layout_b, plan->layout_c,
                    plan->layout_c, pref, 1, &result, &returned);
  if (rc != 0) return failed("cublasLtMatmulAlgoGetHeuristic", rc);
  if (returned < 1 || result.state != 0) {
    return absl::UnimplementedError(Describe(a, activation) +
                                    ": cuBLASLt's heuristic has no algorithm for it");
  }
  plan->algo = result.algo;
  plan->workspace_bytes = result.workspace_bytes;
  return plan;
}

absl::Status CheckArgs(const MatmulArgs& a, int64_t activation) {
  auto what = [&] { return Describe(a, activation); };
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (MatmulCudaDataType(a.dtype) < 0) {
    return absl::InvalidArgumentError(what() + ": unsupported dtype");
  }
  if (activation < kActivationNone || activation > kActivationGeluTanh) {
    return absl::InvalidArgumentError(what() + ": unknown activation code");
  }
  if (a.batch > kMax || a.m > kMax || a.n > kMax || a.k > kMax) {
    return absl::InvalidArgumentError(what() + ": sizes must be below 2^31");
  }
  return absl::OkStatus();
}

/// The plan of `a` at `align`, made at the first call and kept; calls are serialized (the
/// descriptor's bias pointer is set per call).
class Plans {
 public:
  absl::StatusOr<const Plan*> Find(const Lt& lt, const MatmulArgs& a, int64_t activation,
                                   int64_t align) {
    const Key key{a.dtype,
                  a.batch,
                  a.m,
                  a.n,
                  a.k,
                  a.trans_a,
                  a.trans_b,
                  a.batch_stride_a,
                  a.batch_stride_b,
                  a.bias != nullptr,
                  activation,
                  align};
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.get();
    auto plan = MakePlan(lt, a, activation, align);
    if (!plan.ok()) return plan.status();
    return plans_.emplace(key, *std::move(plan)).first->second.get();
  }
  std::mutex& mutex() { return mutex_; }

 private:
  std::mutex mutex_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

Plans& AllPlans() {
  static Plans* plans = new Plans;
  return *plans;
}

}  // namespace

absl::Status CublasLtMatmul(const MatmulArgs& a, int64_t activation) {
  // The description is formatted only for an error: this is every call's path.
  auto what = [&] { return Describe(a, activation); };
  absl::Status st = CheckArgs(a, activation);
  if (!st.ok()) return st;
  if (a.batch < 0 || a.m < 0 || a.n < 0 || a.k < 1) {
    return absl::InvalidArgumentError(what() + ": sizes must be positive (k at least 1)");
  }
  if (a.batch == 0 || a.m == 0 || a.n == 0) return absl::OkStatus();
  const Lt& lt = Get();
  if (!lt.status.ok())
    return absl::Status(lt.status.code(), what() + ": " + std::string(lt.status.message()));
  Plans& plans = AllPlans();
  std::lock_guard<std::mutex> lock(plans.mutex());
  auto plan = plans.Find(lt, a, activation, Alignment(a));
  if (!plan.ok()) return plan.status();
  const Plan& p = **plan;
  if (a.bias) {
    if (int rc = lt.desc_set(p.desc, kDescBiasPointer, &a.bias, sizeof(a.bias)); rc != 0) {
      return absl::InternalError(what() + ": setting the bias pointer: " + lt.Name(rc));
    }
  }
  const DeviceWorkspace workspace(p.workspace_bytes, a.stream);
  if (workspace.failed()) return workspace.Error(what());
  const float one = 1.f, zero = 0.f;
  int rc =
      lt.matmul(lt.handle, p.desc, &one, a.b, p.layout_a, a.a, p.layout_b, &zero, a.c, p.layout_c,
                a.c, p.layout_c, &p.algo, workspace.get(), p.workspace_bytes, a.stream);
  if (rc != 0) return absl::InternalError(what() + ": cublasLtMatmul failed: " + lt.Name(rc));
  return absl::OkStatus();
}

absl::StatusOr<std::string> CublasLtCheck(const MatmulArgs& a, int64_t activation) {
  absl::Status st = CheckArgs(a, activation);
  if (!st.ok()) return st;
  const Lt& lt = Get();
  if (!lt.status.ok()) return lt.status;
  if (a.batch <= 0 || a.m <= 0 || a.n <= 0 || a.k <= 0) return std::string("cuBLASLt");
  Plans& plans = AllPlans();
  std::lock_guard<std::mutex> lock(plans.mutex());
  auto plan = plans.Find(lt, a, activation, 16);
  if (!plan.ok()) return plan.status();
  return absl::StrCat("cuBLASLt (workspace ", (*plan)->workspace_bytes, " bytes)");
}

absl::Status LoadCublasLt() { return Get().status; }

}  // namespace cinn_like::runtime::cuda

extern "C" int cinn_like_cublaslt_matmul(const void* a, const void* b, const void* bias, void* c,
                                         CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM)
                                             int64_t activation,
                                         void* stream) {
  namespace cu = cinn_like::runtime::cuda;
  const cinn_like::runtime::MatmulArgList<int64_t> args{CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_VALUE)
                                                            activation};
  return cinn_like::runtime::ReturnStatus(
      cu::CublasLtMatmul(cu::MatmulArgsOf(a, b, bias, c, args, stream), args.activation));
}
