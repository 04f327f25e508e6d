/// \file The conv2d externs: cuDNN plans made once per configuration, run through the graph API
/// (cudnn_graph.h) or, where it has no engine, the legacy convolution API.
#include "runtime/cuda/cudnn.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <array>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cudnn_graph.h"
#include "runtime/cuda/cudnn_library.h"
#include "runtime/cuda/device_workspace.h"
#include "runtime/status_return.h"

namespace cinn_like::runtime::cuda {
namespace {

/// What a convolution's descriptors and algorithm depend on: every argument but the pointers
/// and the stream, and the pointers' alignment.
using PlanKey = std::array<int64_t, 21>;

PlanKey KeyOf(const Conv2dArgs& a) {
  return {a.dtype,
          a.n,
          a.c,
          a.h,
          a.w_dim,
          a.k,
          a.r,
          a.s,
          a.out_h,
          a.out_w,
          a.pad_h,
          a.pad_w,
          a.stride_h,
          a.stride_w,
          a.dilation_h,
          a.dilation_w,
          a.groups,
          a.bias != nullptr,
          a.channels_last,
          GraphConvAlignment(a),
          a.direction};
}

/// One configuration's descriptors, algorithm and workspace size, made at its first use (the
/// compile-time check's, on scratch tensors, or its first call) and kept for the process
/// (descriptors are never destroyed: the plan may run at any later call). `status` is the error of
/// making it, returned again by every call of that configuration.
struct Plan {
  absl::Status status;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  size_t workspace_bytes = 0;
  /// The graph API's plan; null where it has none (then the legacy API runs, with `algo`).
  std::shared_ptr<const GraphConvPlan> graph;
};

/// The workspace the algorithm search may give an algorithm (those needing more are skipped).
constexpr size_t kFindWorkspaceBytes = size_t{256} << 20;

/// Makes the plan of `a`'s configuration (its handle's stream already set), timing the
/// float32 algorithms on `a`'s tensors (y is overwritten).
Plan MakePlan(const Cudnn& dnn, const Conv2dArgs& a, const std::string& what) {
  Plan p;
  auto check = [&](cudnnStatus_t rc, const char* call) {
    return rc == CUDNN_STATUS_SUCCESS
               ? absl::OkStatus()
               : absl::InternalError(
                     absl::StrCat(what, ": ", call, " failed: ", dnn.cudnnGetErrorString(rc)));
  };
  cudnnDataType_t type = a.dtype == kConvFloat32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  auto i = [](int64_t v) { return static_cast<int>(v); };
  const cudnnTensorFormat_t format = a.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  absl::Status& st = p.status;
  st = check(dnn.cudnnCreateTensorDescriptor(&p.x), "cudnnCreateTensorDescriptor");
  if (st.ok()) st = check(dnn.cudnnCreateTensorDescriptor(&p.y), "cudnnCreateTensorDescriptor");
  if (st.ok()) st = check(dnn.cudnnCreateFilterDescriptor(&p.w), "cudnnCreateFilterDescriptor");
  if (st.ok()) {
    st = check(dnn.cudnnCreateConvolutionDescriptor(&p.conv), "cudnnCreateConvolutionDescriptor");
  }
  if (st.ok()) {
    st =
        check(dnn.cudnnSetTensor4dDescriptor(p.x, format, type, i(a.n), i(a.c), i(a.h), i(a.w_dim)),
              "cudnnSetTensor4dDescriptor (x)");
  }
  if (st.ok()) {
    st = check(
        dnn.cudnnSetTensor4dDescriptor(p.y, format, type, i(a.n), i(a.k), i(a.out_h), i(a.out_w)),
        "cudnnSetTensor4dDescriptor (y)");
  }
  if (st.ok()) {
    st = check(dnn.cudnnSetFilter4dDescriptor(p.w, type, format, i(a.k), i(a.c / a.groups), i(a.r),
                                              i(a.s)),
               "cudnnSetFilter4dDescriptor");
  }
  if (st.ok()) {
    st = check(dnn.cudnnSetConvolution2dDescriptor(p.conv, i(a.pad_h), i(a.pad_w), i(a.stride_h),
                                                   i(a.stride_w), i(a.dilation_h), i(a.dilation_w),
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               "cudnnSetConvolution2dDescriptor");
  }
  if (st.ok()) {
    st = check(dnn.cudnnSetConvolutionGroupCount(p.conv, i(a.groups)),
               "cudnnSetConvolutionGroupCount");
  }
  if (st.ok()) {
    // Float32 stays true FP32 (no TF32), as the cuBLAS extern.
    st = check(dnn.cudnnSetConvolutionMathType(
                   p.conv, a.dtype == kConvFloat32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
               "cudnnSetConvolutionMathType");
  }
  if (st.ok() && a.bias) {
    st = check(dnn.cudnnCreateTensorDescriptor(&p.bias), "cudnnCreateTensorDescriptor");
    if (st.ok()) {
      st = check(dnn.cudnnSetTensor4dDescriptor(p.bias, format, type, 1, i(a.k), 1, 1),
                 "cudnnSetTensor4dDescriptor (bias)");
    }
  }
  if (!st.ok()) return p;
  // The graph API first: its plans run with a fraction of the legacy call's host time. The
  // legacy descriptors above still serve the bias.
  auto graph = MakeGraphConvPlan(dnn, a, what);
  if (graph.ok()) {
    p.graph = *std::move(graph);
    return p;
  }
  if (a.direction != kConvForward) {  // the gradients have no legacy path here
    p.status = graph.status();
    return p;
  }
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  st = check(dnn.cudnnGetConvolutionForwardAlgorithm_v7(
                 dnn.handle, p.x, p.w, p.conv, p.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
             "cudnnGetConvolutionForwardAlgorithm_v7");
  if (!st.ok()) return p;
  for (int k = 0; k < found; ++k) {
    if (perf[k].status == CUDNN_STATUS_SUCCESS) {
      p.algo = perf[k].algo;
      break;
    }
  }
  // The plan is made once: for float32, time the algorithms on this call's own tensors (as
  // PyTorch's cudnn.benchmark does) and keep the fastest, within a workspace of
  // kFindWorkspaceBytes (H100, resnet18 batch 16: the convolutions' time 2.7 -> 1.7 ms). Not
  // for float16: there the search picked a non-fused Winograd path in some processes, twice
  // the time of the heuristic's tensor-core kernel. The heuristic's choice stays when timing
  // is not possible (no workspace, an error).
  void* ws = a.dtype == kConvFloat32
                 ? cinn_like_alloc_workspace(/*kDLCUDA*/ 2, kFindWorkspaceBytes, a.stream)
                 : nullptr;
  if (ws) {
    int timed = 0;
    cudnnConvolutionFwdAlgoPerf_t measured[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    // Twice: the first search's times include loading each algorithm's kernels (cuDNN loads
    // them lazily), which made it pick slow algorithms that happened to be loaded already.
    cudnnStatus_t rc = CUDNN_STATUS_SUCCESS;
    for (int round = 0; round < 2 && rc == CUDNN_STATUS_SUCCESS; ++round) {
      rc = dnn.cudnnFindConvolutionForwardAlgorithmEx(dnn.handle, p.x, a.x, p.w, a.w, p.conv, p.y,
                                                      a.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &timed,
                                                      measured, ws, kFindWorkspaceBytes);
    }
    cinn_like_free_workspace(2, ws, a.stream);
    for (int k = 0; rc == CUDNN_STATUS_SUCCESS && k < timed; ++k) {
      if (measured[k].status == CUDNN_STATUS_SUCCESS) {  // sorted fastest first
        p.algo = measured[k].algo;
        break;
      }
    }
  } else if (a.dtype == kConvFloat32) {
    cinn_like_set_last_error("");  // the failed allocation is no error of the call
  }
  st = check(dnn.cudnnGetConvolutionForwardWorkspaceSize(dnn.handle, p.x, p.w, p.conv, p.y, p.algo,
                                                         &p.workspace_bytes),
             "cudnnGetConvolutionForwardWorkspaceSize");
  return p;
}

/// "cuDNN conv2d (x [..], w [..], y [..], pad .., stride .., dilation .., groups ..)".
std::string Describe(const Conv2dArgs& a) {
  const char* kind = a.direction == kConvBackwardData     ? "conv2d backward data"
                     : a.direction == kConvBackwardFilter ? "conv2d backward filter"
                                                          : "conv2d";
  return absl::StrCat("cuDNN ", kind, " (x [", a.n, ", ", a.c, ", ", a.h, ", ", a.w_dim, "], w [",
                      a.k, ", ", a.groups > 0 ? a.c / a.groups : a.c, ", ", a.r, ", ", a.s,
                      "], y [", a.n, ", ", a.k, ", ", a.out_h, ", ", a.out_w, "], pad ", a.pad_h,
                      "x", a.pad_w, ", stride ", a.stride_h, "x", a.stride_w, ", dilation ",
                      a.dilation_h, "x", a.dilation_w, ", groups ", a.groups, ")");
}

/// The checks every use of `a` starts with: its dtype and groups (an error), and whether it
/// is empty (nothing to do).
absl::Status CheckArgs(const Conv2dArgs& a, bool* empty) {
  if (a.dtype != kConvFloat32 && a.dtype != kConvFloat16) {
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(a), ": unsupported dtype code ", a.dtype));
  }
  if (a.direction < kConvForward || a.direction > kConvBackwardFilter ||
      (a.direction != kConvForward && (a.bias || a.channels_last))) {
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(a), ": unsupported direction ", a.direction));
  }
  if (a.groups <= 0 || a.c % a.groups || a.k % a.groups) {
    return absl::InvalidArgumentError(Describe(a) + ": groups must divide the channels");
  }
  *empty = a.n == 0 || a.k == 0 || a.out_h == 0 || a.out_w == 0;
  // An empty batch's data gradient is empty too; other empty gradients would have to be
  // written as zeros, which these calls do not do.
  if (*empty && a.direction != kConvForward && !(a.direction == kConvBackwardData && a.n == 0)) {
    return absl::UnimplementedError(Describe(a) + ": the gradient of an empty convolution");
  }
  return absl::OkStatus();
}

/// The process's plans and the lock every use of cuDNN's handle takes: the stream is a
/// property of the handle, and the plans are shared, so one call at a time.
struct Plans {
  std::mutex mutex;
  std::map<PlanKey, Plan> map;
  /// Each made plan's status, under a lock of its own: a compile asks it while the plan worker
  /// holds `mutex` making another plan (asking under `mutex` serialized the two).
  std::mutex known_mutex;
  std::map<PlanKey, absl::Status> known;
};

Plans& AllPlans() {
  static auto* plans = new Plans;
  return *plans;
}

/// The plan of `a`'s configuration, made at its first use (`what` names it then: a call whose
/// plan exists formats nothing); the lock held and the handle's stream set to a.stream.
const Plan& PlanOf(Plans& plans, const Cudnn& dnn, const Conv2dArgs& a,
                   absl::FunctionRef<std::string()> what) {
  PlanKey key = KeyOf(a);
  auto it = plans.map.find(key);
  if (it == plans.map.end()) {
    it = plans.map.emplace(key, MakePlan(dnn, a, what())).first;
    std::lock_guard<std::mutex> lock(plans.known_mutex);
    plans.known.emplace(key, it->second.status);
  }
  return it->second;
}

/// What preparing `*a`'s plan comes to without making it: an error (wrong arguments, no cuDNN,
/// a plan that failed before), false (an empty convolution) or true (made before); nullopt
/// when it must be made. `*a` is then keyed as the scratch tensors are (16-byte aligned).
std::optional<absl::StatusOr<bool>> KnownPlan(Conv2dArgs* a) {
  bool empty = false;
  absl::Status st = CheckArgs(*a, &empty);
  if (!st.ok()) return st;
  if (empty) return false;
  const Cudnn& dnn = GetCudnn();
  if (!dnn.status.ok()) return dnn.status;
  a->x = a->w = nullptr;
  a->y = nullptr;
  Plans& plans = AllPlans();
  std::lock_guard<std::mutex> lock(plans.known_mutex);
  auto it = plans.known.find(KeyOf(*a));
  if (it == plans.known.end()) return std::nullopt;
  if (!it->second.ok()) return it->second;
  return true;
}

}  // namespace

absl::Status CudnnConv2d(const Conv2dArgs& a) {
  auto what = [&] { return Describe(a); };
  bool empty = false;
  absl::Status st = CheckArgs(a, &empty);
  if (!st.ok() || empty) return st;
  const Cudnn& dnn = GetCudnn();
  if (!dnn.status.ok()) {
    return absl::Status(dnn.status.code(), what() + ": " + std::string(dnn.status.message()));
  }
  Plans& plans = AllPlans();
  std::lock_guard<std::mutex> lock(plans.mutex);
  auto check = [&](cudnnStatus_t rc, const char* call) {
    return rc == CUDNN_STATUS_SUCCESS
               ? absl::OkStatus()
               : absl::InternalError(
                     absl::StrCat(what(), ": ", call, " failed: ", dnn.cudnnGetErrorString(rc)));
  };
  st = check(dnn.cudnnSetStream(dnn.handle, static_cast<cudaStream_t>(a.stream)), "cudnnSetStream");
  if (!st.ok()) return st;
  const Plan& p = PlanOf(plans, dnn, a, what);
  if (!p.status.ok()) return p.status;
  const float one = 1.f, zero = 0.f;
  if (p.graph) {
    st = RunGraphConvPlan(dnn, *p.graph, a, what);
    if (!st.ok() || !a.bias) return st;
    return check(dnn.cudnnAddTensor(dnn.handle, &one, p.bias, a.bias, &one, p.y, a.y),
                 "cudnnAddTensor (bias)");
  }
  const DeviceWorkspace workspace(p.workspace_bytes, a.stream);
  if (workspace.failed()) return workspace.Error(what());
  st = check(dnn.cudnnConvolutionForward(dnn.handle, &one, p.x, a.x, p.w, a.w, p.conv, p.algo,
                                         workspace.get(), p.workspace_bytes, &zero, p.y, a.y),
             "cudnnConvolutionForward");
  if (!st.ok() || !a.bias) return st;
  return check(dnn.cudnnAddTensor(dnn.handle, &one, p.bias, a.bias, &one, p.y, a.y),
               "cudnnAddTensor (bias)");
}

size_t CudnnPlanCount() {
  Plans& plans = AllPlans();
  std::lock_guard<std::mutex> lock(plans.mutex);
  return plans.map.size();
}

absl::StatusOr<bool> CudnnPrepareConv2d(Conv2dArgs a) {
  if (auto known = KnownPlan(&a)) return *known;
  const Cudnn& dnn = GetCudnn();
  Plans& plans = AllPlans();
  auto driver = Driver();
  if (!driver.ok() || !EnsureContext().ok()) return false;
  const DriverApi& d = **driver;
  const int64_t bytes = a.dtype == kConvFloat32 ? 4 : 2;
  std::vector<CUdeviceptr> scratch;
  bool allocated = true;
  auto alloc = [&](int64_t elements) -> void* {
    CUdeviceptr p = 0;
    allocated = allocated && d.MemAlloc(&p, static_cast<size_t>(elements * bytes)) == CUDA_SUCCESS;
    if (!allocated) return nullptr;
    scratch.push_back(p);
    return reinterpret_cast<void*>(p);
  };
  a.x = alloc(a.n * a.c * a.h * a.w_dim);
  a.w = alloc(a.k * (a.c / a.groups) * a.r * a.s);
  a.y = alloc(a.n * a.k * a.out_h * a.out_w);
  if (a.bias) a.bias = alloc(a.k);
  absl::Status made = absl::OkStatus();
  bool planned = false;  // else (too big for the free memory now) the first call makes the plan
  if (allocated) {
    a.stream = nullptr;
    std::lock_guard<std::mutex> lock(plans.mutex);
    if (dnn.cudnnSetStream(dnn.handle, nullptr) == CUDNN_STATUS_SUCCESS) {
      made = PlanOf(plans, dnn, a, [&] { return Describe(a); }).status;
      planned = true;
    }
  }
  for (CUdeviceptr p : scratch) d.MemFree(p);
  if (!made.ok()) return made;
  return planned;
}

namespace {

/// The plans one compiling thread queued (CudnnPrepareConv2dBeside), made in order by one worker
/// thread in that thread's CUDA context until CudnnWaitForPlans (or the thread's end) joins it.
class PlanQueue {
 public:
  ~PlanQueue() { (void)Wait(); }

  /// False when no worker thread can be started (then the caller makes the plan itself).
  bool Push(const Conv2dArgs& a) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!queued_.insert(KeyOf(a)).second) return true;  // already queued
    todo_.push_back(a);
    if (!worker_.joinable()) {
      CUcontext context = nullptr;
      if (auto driver = Driver(); driver.ok()) (*driver)->CtxGetCurrent(&context);
      try {
        worker_ = std::thread([this, context] { Work(context); });
      } catch (const std::system_error&) {
        todo_.pop_back();
        queued_.erase(KeyOf(a));
        return false;
      }
    }
    lock.unlock();
    wake_.notify_one();
    return true;
  }

  absl::Status Wait() {
    if (!worker_.joinable()) return absl::OkStatus();
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    wake_.notify_one();
    worker_.join();
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = false;
    queued_.clear();
    absl::Status first = std::move(first_error_);
    first_error_ = absl::OkStatus();
    return first;
  }

 private:
  void Work(CUcontext context) {
    if (context) {
      if (auto driver = Driver(); driver.ok()) (*driver)->CtxSetCurrent(context);
    }
    while (true) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return closing_ || !todo_.empty(); });
      if (todo_.empty()) return;  // closing, and nothing left
      const Conv2dArgs a = todo_.front();
      todo_.pop_front();
      lock.unlock();
      auto made = CudnnPrepareConv2d(a);
      if (!made.ok()) {
        lock.lock();
        if (first_error_.ok()) first_error_ = made.status();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Conv2dArgs> todo_;
  std::set<PlanKey> queued_;
  bool closing_ = false;
  absl::Status first_error_;
  std::thread worker_;
};

PlanQueue& ThisThreadsPlans() {
  thread_local PlanQueue queue;
  return queue;
}

}  // namespace

absl::StatusOr<bool> CudnnPrepareConv2dBeside(Conv2dArgs a) {
  if (auto known = KnownPlan(&a)) return *known;
  if (!ThisThreadsPlans().Push(a)) return CudnnPrepareConv2d(a);
  return true;
}

absl::Status CudnnWaitForPlans() { return ThisThreadsPlans().Wait(); }

}  // namespace cinn_like::runtime::cuda

namespace {

namespace cu = cinn_like::runtime::cuda;

/// Conv2dArgs of a convolution extern's pointers and sizes (a forward's or a gradient's list:
/// the same names), by name.
template <typename List>
cu::Conv2dArgs ConvArgsOf(const void* x, const void* w, const void* bias, void* y, const List& a,
                          void* stream) {
  cu::Conv2dArgs out{};
  out.x = x;
  out.w = w;
  out.bias = bias;
  out.y = y;
  cinn_like::runtime::SetConv2dSizes(a, out);
  out.stream = stream;
  return out;
}

int RunConv2d(bool channels_last, const void* x, const void* w, const void* bias, void* y,
              const cinn_like::runtime::Conv2dArgList<int64_t>& a, void* stream) {
  cu::Conv2dArgs args = ConvArgsOf(x, w, a.has_bias ? bias : nullptr, y, a, stream);
  args.channels_last = channels_last;
  return cinn_like::runtime::ReturnStatus(cu::CudnnConv2d(args));
}

/// A gradient: kConvBackwardData writes Conv2dArgs::x and reads dy through y,
/// kConvBackwardFilter writes w.
int RunConvBackward(int64_t direction, const void* x, const void* w, void* y,
                    const cinn_like::runtime::Conv2dGradArgList<int64_t>& a, void* stream) {
  cu::Conv2dArgs args = ConvArgsOf(x, w, nullptr, y, a, stream);
  args.direction = direction;
  return cinn_like::runtime::ReturnStatus(cu::CudnnConv2d(args));
}

}  // namespace

extern "C" int cinn_like_cudnn_conv2d(const void* x, const void* w, const void* bias, void* y,
                                      CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM) void* stream) {
  return RunConv2d(false, x, w, bias, y, {CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_VALUE)}, stream);
}

extern "C" int cinn_like_cudnn_conv2d_backward_data(
    const void* dy, const void* w, void* dx,
    CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_PARAM) void* stream) {
  return RunConvBackward(cu::kConvBackwardData, dx, w, const_cast<void*>(dy),
                         {CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_VALUE)}, stream);
}

extern "C" int cinn_like_cudnn_conv2d_backward_filter(
    const void* x, const void* dy, void* dw,
    CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_PARAM) void* stream) {
  return RunConvBackward(cu::kConvBackwardFilter, x, dw, const_cast<void*>(dy),
                         {CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_VALUE)}, stream);
}

extern "C" int cinn_like_cudnn_conv2d_nhwc(
    const void* x, const void* w, const void* bias, void* y,
    CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM) void* stream) {
  return RunConv2d(true, x, w, bias, y, {CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_VALUE)}, stream);
}
#pragma GCC diagnostic pop
