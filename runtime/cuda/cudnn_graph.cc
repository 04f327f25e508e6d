/// \file Convolutions through cuDNN's graph (backend) API: descriptors, engine choice and
/// execution plans, made once per configuration.
#include "runtime/cuda/cudnn_graph.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/device_workspace.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the graph's handle attributes

namespace cinn_like::runtime::cuda {
namespace {

/// A backend descriptor, destroyed with its owner.
class Desc {
 public:
  Desc(const Cudnn& dnn, cudnnBackendDescriptorType_t type) : dnn_(dnn) {
    if (dnn.cudnnBackendCreateDescriptor(type, &d_) != CUDNN_STATUS_SUCCESS) d_ = nullptr;
  }
  ~Desc() {
    if (d_) dnn_.cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  /// Sets attribute `name` to `count` values of `type`; false on failure (or no descriptor).
  bool Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
           const void* values) {
    return d_ &&
           dnn_.cudnnBackendSetAttribute(d_, name, type, count, values) == CUDNN_STATUS_SUCCESS;
  }
  bool SetDesc(cudnnBackendAttributeName_t name, const Desc& value) {
    cudnnBackendDescriptor_t v = value.get();
    return Set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
  }
  bool SetInts(cudnnBackendAttributeName_t name, const std::vector<int64_t>& v) {
    return Set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(v.size()), v.data());
  }
  cudnnStatus_t Finalize() {
    return d_ ? dnn_.cudnnBackendFinalize(d_) : CUDNN_STATUS_ALLOC_FAILED;
  }

 private:
  const Cudnn& dnn_;
  cudnnBackendDescriptor_t d_ = nullptr;
};

using DescPtr = std::shared_ptr<Desc>;

// The tensors' unique ids in the graph and the variant pack.
constexpr int64_t kX = 'x', kW = 'w', kY = 'y';

/// A 4-d tensor in cuDNN's dim order (N, C, H, W), strided NCHW or NHWC.
DescPtr Tensor(const Cudnn& dnn, int64_t uid, cudnnDataType_t type, int64_t n, int64_t c, int64_t h,
               int64_t w, bool channels_last, int64_t alignment) {
  auto d = std::make_shared<Desc>(dnn, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  std::vector<int64_t> dims{n, c, h, w};
  std::vector<int64_t> strides = channels_last ? std::vector<int64_t>{h * w * c, 1, w * c, c}
                                               : std::vector<int64_t>{c * h * w, h * w, w, 1};
  bool ok = d->Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type) &&
            d->SetInts(CUDNN_ATTR_TENSOR_DIMENSIONS, dims) &&
            d->SetInts(CUDNN_ATTR_TENSOR_STRIDES, strides) &&
            d->Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) &&
            d->Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment) &&
            d->Finalize() == CUDNN_STATUS_SUCCESS;
  return ok ? d : nullptr;
}

/// What an engine config is: `kRefused` when its numerical notes break the extern's promise
/// (FP32 accumulation, no TF32 or other down-conversion for float32 operands, deterministic),
/// else whether its kernels are precompiled or compiled at run time (NVRTC inside cuDNN, which
/// the first call would wait for).
enum class Engine { kRefused, kPrecompiled, kRuntimeCompiled };

/// Engine `e`'s notes of one kind (at most `max`) into `out`; false when cuDNN cannot say.
template <typename Note>
bool ReadNotes(const Cudnn& dnn, cudnnBackendDescriptor_t e, cudnnBackendAttributeName_t attr,
               cudnnBackendAttributeType_t type, int64_t max, std::vector<Note>* out) {
  out->resize(max);
  int64_t count = 0;
  if (dnn.cudnnBackendGetAttribute(e, attr, type, max, &count, out->data()) !=
      CUDNN_STATUS_SUCCESS) {
    return false;
  }
  out->resize(count);
  return true;
}

Engine Classify(const Cudnn& dnn, cudnnBackendDescriptor_t config, bool float32) {
  Desc engine(dnn, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t got = 0;
  if (!config || !e ||
      dnn.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                                   &e) != CUDNN_STATUS_SUCCESS) {
    return Engine::kRefused;
  }
  std::vector<cudnnBackendBehaviorNote_t> behavior;
  std::vector<cudnnBackendNumericalNote_t> notes;
  if (!ReadNotes(dnn, e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                 CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &behavior) ||
      !ReadNotes(dnn, e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &notes)) {
    return Engine::kRefused;
  }
  const bool compiled = std::find(behavior.begin(), behavior.end(),
                                  CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) != behavior.end();
  for (cudnnBackendNumericalNote_t note : notes) {
    switch (note) {
      case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
        return Engine::kRefused;
      case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
      case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
        if (float32) return Engine::kRefused;
        break;
      default:
        break;
    }
  }
  return compiled ? Engine::kRuntimeCompiled : Engine::kPrecompiled;
}

/// How many plans the first call times: the heuristics' order is a good prior, but not for
/// grouped convolutions' gradients (H200, regnet_y_400mf training, batch 32: timing 16 rather
/// than 4 found plans that took the step's convolution and GEMM kernels from 15.0 to 11.6 ms and
/// its launches from 1432 to 824; resnet18 and mobilenet_v3 kept their plans). Each plan timed
/// costs the first call four runs of it.
constexpr int kTimedPlans = 16;
/// Plans needing a larger workspace are skipped.
constexpr int64_t kMaxWorkspaceBytes = int64_t{256} << 20;

}  // namespace

struct GraphConvPlan {
  std::vector<DescPtr> keep;  // the graph's descriptors, alive as long as the plan
  DescPtr plan;
  int64_t workspace_bytes = 0;
};

namespace {

/// Executes `plan` on the pointers of `a` with `workspace`.
cudnnStatus_t Execute(const Cudnn& dnn, const GraphConvPlan& plan, const Conv2dArgs& a,
                      void* workspace) {
  Desc pack(dnn, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  const int64_t uids[3] = {kX, kW, kY};
  void* pointers[3] = {const_cast<void*>(a.x), const_cast<void*>(a.w), a.y};
  if (!pack.Set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids) ||
      !pack.Set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers) ||
      !pack.Set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (cudnnStatus_t rc = pack.Finalize(); rc != CUDNN_STATUS_SUCCESS) return rc;
  return dnn.cudnnBackendExecute(dnn.handle, plan.plan->get(), pack.get());
}

/// The graph's one operation: y = conv(x, w), or with dy in y, dx in x (backward data) or dw in
/// w (backward filter); null when cuDNN refuses it.
DescPtr Operation(const Cudnn& dnn, int64_t direction, const Desc& x, const Desc& w, const Desc& y,
                  const Desc& conv) {
  const float alpha = 1.f, beta = 0.f;
  std::shared_ptr<Desc> op;
  bool ok = false;
  if (direction == kConvBackwardData) {
    op = std::make_shared<Desc>(dnn, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
    ok = op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  } else if (direction == kConvBackwardFilter) {
    op =
        std::make_shared<Desc>(dnn, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
    ok = op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  } else {
    op = std::make_shared<Desc>(dnn, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    ok = op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y) &&
         op->SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha) &&
         op->Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  }
  if (!ok || op->Finalize() != CUDNN_STATUS_SUCCESS) return nullptr;
  return op;
}

/// Device milliseconds of a few runs of `plan` on `a` (after one untimed run, which loads its
/// kernels); a negative value when it fails.
float TimePlan(const Cudnn& dnn, const GraphConvPlan& plan, const Conv2dArgs& a) {
  auto driver = Driver();
  if (!driver.ok()) return -1;
  const DriverApi& d = **driver;
  const DeviceWorkspace workspace(plan.workspace_bytes, a.stream);
  if (workspace.failed()) {
    cinn_like_set_last_error("");  // a plan without its workspace is no error of the call
    return -1;
  }
  void* ws = workspace.get();
  float ms = -1;
  CUevent start = nullptr, end = nullptr;
  auto stream = static_cast<CUstream>(a.stream);
  if (Execute(dnn, plan, a, ws) == CUDNN_STATUS_SUCCESS &&
      d.EventCreate(&start, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      d.EventCreate(&end, CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
    bool ok = d.EventRecord(start, stream) == CUDA_SUCCESS;
    for (int i = 0; ok && i < 3; ++i) ok = Execute(dnn, plan, a, ws) == CUDNN_STATUS_SUCCESS;
    if (ok && d.EventRecord(end, stream) == CUDA_SUCCESS &&
        d.EventSynchronize(end) == CUDA_SUCCESS) {
      d.EventElapsedTime(&ms, start, end);
    }
  }
  if (start) d.EventDestroy(start);
  if (end) d.EventDestroy(end);
  return ms;
}

}  // namespace

int64_t GraphConvAlignment(const Conv2dArgs& a) {
  auto bits = reinterpret_cast<uintptr_t>(a.x) | reinterpret_cast<uintptr_t>(a.w) |
              reinterpret_cast<uintptr_t>(a.y) | 16;
  return static_cast<int64_t>(bits & (~bits + 1));  // the lowest set bit
}

absl::StatusOr<std::shared_ptr<const GraphConvPlan>> MakeGraphConvPlan(const Cudnn& dnn,
                                                                       const Conv2dArgs& a,
                                                                       const std::string& what) {
  const bool float32 = a.dtype == kConvFloat32;
  const cudnnDataType_t type = float32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  const int64_t align = GraphConvAlignment(a);
  auto failed = [&](const char* step) {
    return absl::UnimplementedError(absl::StrCat(what, ": cuDNN's graph API: ", step));
  };
  DescPtr x = Tensor(dnn, kX, type, a.n, a.c, a.h, a.w_dim, a.channels_last, align);
  DescPtr w = Tensor(dnn, kW, type, a.k, a.c / a.groups, a.r, a.s, a.channels_last, align);
  DescPtr y = Tensor(dnn, kY, type, a.n, a.k, a.out_h, a.out_w, a.channels_last, align);
  if (!x || !w || !y) return failed("a tensor descriptor was refused");
  auto conv = std::make_shared<Desc>(dnn, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t accumulate = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = 2;
  bool ok = conv->Set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &accumulate) &&
            conv->Set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode) &&
            conv->Set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial) &&
            conv->SetInts(CUDNN_ATTR_CONVOLUTION_DILATIONS, {a.dilation_h, a.dilation_w}) &&
            conv->SetInts(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {a.stride_h, a.stride_w}) &&
            conv->SetInts(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {a.pad_h, a.pad_w}) &&
            conv->SetInts(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {a.pad_h, a.pad_w}) &&
            conv->Finalize() == CUDNN_STATUS_SUCCESS;
  if (!ok) return failed("the convolution descriptor was refused");
  DescPtr op = Operation(dnn, a.direction, *x, *w, *y, *conv);
  ok = op != nullptr;
  if (!ok) return failed("the convolution operation was refused");
  auto graph = std::make_shared<Desc>(dnn, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnHandle_t handle = dnn.handle;
  ok = graph->SetDesc(CUDNN_ATTR_OPERATIONGRAPH_OPS, *op) &&
       graph->Set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle) &&
       graph->Finalize() == CUDNN_STATUS_SUCCESS;
  if (!ok) return failed("the operation graph was refused");
  Desc heur(dnn, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
  ok = heur.SetDesc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *graph) &&
       heur.Set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode) &&
       heur.Finalize() == CUDNN_STATUS_SUCCESS;
  int64_t count = 0;
  ok = ok && dnn.cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                          nullptr) == CUDNN_STATUS_SUCCESS;
  if (!ok || count <= 0) return failed("the heuristics propose no engine");
  std::vector<DescPtr> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_shared<Desc>(dnn, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(configs.back()->get());
  }
  if (dnn.cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count,
                                   raw.data()) != CUDNN_STATUS_SUCCESS) {
    return failed("the heuristics' results could not be read");
  }
  // The engines that keep the precision in the heuristics' order, precompiled ones first:
  // runtime-compiled ones are tried where the heuristics rank them above every precompiled one
  // (cuDNN's specialized kernels, such as the NHWC depthwise conv2d_c1_k1_nhwc: 78 against 730
  // us for a grouped direct kernel on ConvNeXt's 7x7 at batch 32, H200; the first call waits
  // for their compile, as PyTorch's does), and the others only where no precompiled one makes a
  // plan. The first kTimedPlans plans are timed and the fastest kept.
  std::vector<int64_t> order, compiled;
  bool precompiled_seen = false;
  for (int64_t i = 0; i < count; ++i) {
    const Engine kind = Classify(dnn, raw[i], float32);
    VLOG(1) << what << ": heuristic rank " << i << ": "
            << (kind == Engine::kRefused       ? "refused (precision or determinism)"
                : kind == Engine::kPrecompiled ? "precompiled"
                                               : "compiled at run time");
    if (kind == Engine::kRefused) continue;
    precompiled_seen = precompiled_seen || kind == Engine::kPrecompiled;
    (kind == Engine::kPrecompiled || !precompiled_seen ? order : compiled).push_back(i);
  }
  const size_t precompiled = order.size();
  order.insert(order.end(), compiled.begin(), compiled.end());
  std::shared_ptr<GraphConvPlan> best;
  float best_ms = 0;
  int made = 0;
  for (size_t k = 0; k < order.size() && made < kTimedPlans && !(k == precompiled && best); ++k) {
    const int64_t i = order[k];
    auto plan = std::make_shared<Desc>(dnn, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (!plan->Set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle) ||
        !plan->SetDesc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *configs[i]) ||
        plan->Finalize() != CUDNN_STATUS_SUCCESS) {
      continue;
    }
    auto candidate = std::make_shared<GraphConvPlan>();
    candidate->keep = {x, w, y, conv, op, graph, configs[i]};
    candidate->plan = plan;
    int64_t got = 0;
    if (dnn.cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, &got,
                                     &candidate->workspace_bytes) != CUDNN_STATUS_SUCCESS ||
        candidate->workspace_bytes > kMaxWorkspaceBytes) {
      continue;
    }
    ++made;
    const float ms = TimePlan(dnn, *candidate, a);
    VLOG(1) << what << ": heuristic rank " << i << " (" << (k < precompiled ? "timed" : "fallback")
            << ", workspace " << candidate->workspace_bytes << " bytes): " << ms << " ms";
    if (ms < 0) continue;
    if (!best || ms < best_ms) best = candidate, best_ms = ms;
  }
  if (!best) return failed("no engine made a plan that ran");
  VLOG(1) << what << ": kept the plan of " << best_ms << " ms";
  return std::shared_ptr<const GraphConvPlan>(std::move(best));
}

absl::Status RunGraphConvPlan(const Cudnn& dnn, const GraphConvPlan& plan, const Conv2dArgs& a,
                              absl::FunctionRef<std::string()> what) {
  const DeviceWorkspace workspace(plan.workspace_bytes, a.stream);
  if (workspace.failed()) return workspace.Error(what());
  const cudnnStatus_t rc = Execute(dnn, plan, a, workspace.get());
  if (rc == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return CudnnCheck(dnn, rc, what(), "cudnnBackendExecute");
}

}  // namespace cinn_like::runtime::cuda
