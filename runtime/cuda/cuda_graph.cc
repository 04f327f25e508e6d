/// \file CudaGraph: stream capture, instantiation and launch through the driver API.
#include "runtime/cuda/cuda_graph.h"

#include <exception>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/default_workspaces.h"

namespace cinn_like::runtime::cuda {
namespace {

/// The driver, with a context, when it has everything a capture uses.
absl::StatusOr<const DriverApi*> GraphDriver() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  const DriverApi& d = **driver;
  const std::pair<const void*, const char*> needed[] = {
      {reinterpret_cast<const void*>(d.StreamCreate), "cuStreamCreate"},
      {reinterpret_cast<const void*>(d.StreamDestroy), "cuStreamDestroy_v2"},
      {reinterpret_cast<const void*>(d.StreamIsCapturing), "cuStreamIsCapturing"},
      {reinterpret_cast<const void*>(d.StreamBeginCapture), "cuStreamBeginCapture_v2"},
      {reinterpret_cast<const void*>(d.StreamEndCapture), "cuStreamEndCapture"},
      {reinterpret_cast<const void*>(d.GraphInstantiateWithFlags), "cuGraphInstantiateWithFlags"},
      {reinterpret_cast<const void*>(d.GraphLaunch), "cuGraphLaunch"},
      {reinterpret_cast<const void*>(d.GraphExecDestroy), "cuGraphExecDestroy"},
      {reinterpret_cast<const void*>(d.GraphDestroy), "cuGraphDestroy"},
      {reinterpret_cast<const void*>(d.MemAllocAsync), "cuMemAllocAsync"}};
  for (const auto& [entry, name] : needed) {
    if (entry == nullptr) {
      return absl::UnavailableError(absl::StrCat("CUDA graphs need the driver entry ", name,
                                                 ", which this driver lacks (CUDA 11.4+)"));
    }
  }
  absl::Status ready = EnsureContext();
  if (!ready.ok()) return ready;
  return &d;
}

/// The legacy and per-thread default stream handles: a capture takes a stream of its own.
bool IsDefaultStream(void* stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

}  // namespace

absl::Status CudaGraph::CheckCanCapture(void* stream) {
  auto driver = GraphDriver();
  if (!driver.ok()) return driver.status();
  if (IsDefaultStream(stream)) return absl::OkStatus();
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  absl::Status asked =
      CheckCu((*driver)->StreamIsCapturing(static_cast<CUstream>(stream), &capturing),
              "cuStreamIsCapturing");
  if (!asked.ok()) return asked;
  if (capturing != CU_STREAM_CAPTURE_STATUS_NONE) {
    return absl::FailedPreconditionError(
        "the stream is being captured already (by the caller's own CUDA graph capture, which "
        "records a plain run of the call: cinn_like_call_plan_run)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CudaGraph>> CudaGraph::Capture(
    absl::FunctionRef<absl::Status(void* stream)> record, void* stream) {
  absl::Status can = CheckCanCapture(stream);
  if (!can.ok()) return can;
  const DriverApi& d = **GraphDriver();
  CUstream own = nullptr;
  if (IsDefaultStream(stream)) {
    absl::Status made = CheckCu(d.StreamCreate(&own, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (!made.ok()) return made;
    stream = own;
  }
  auto s = static_cast<CUstream>(stream);
  std::unique_ptr<CudaGraph> out(new CudaGraph());
  absl::Status status =
      CheckCu(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  if (status.ok()) {
    try {
      DefaultWorkspaces graph_owned;
      status = record(stream);
    } catch (const std::exception& e) {
      status = absl::InternalError(absl::StrCat("internal error while recording: ", e.what()));
    } catch (...) {
      status = absl::InternalError("internal error while recording");
    }
    // Ended whatever `record` did: a stream left capturing would fail all later work on it.
    CUgraph graph = nullptr;
    absl::Status ended = CheckCu(d.StreamEndCapture(s, &graph), "cuStreamEndCapture");
    out->graph_ = graph;
    if (status.ok()) status = ended;
  }
  if (status.ok()) {
    CUgraphExec exec = nullptr;
    status = CheckCu(d.GraphInstantiateWithFlags(&exec, static_cast<CUgraph>(out->graph_), 0),
                     "cuGraphInstantiateWithFlags");
    out->exec_ = exec;
  }
  if (own != nullptr) d.StreamDestroy(own);
  if (!status.ok()) return status;  // `out` destroys what was made
  return out;
}

CudaGraph::~CudaGraph() {
  auto driver = Driver();
  if (!driver.ok()) return;
  if (exec_ != nullptr) (*driver)->GraphExecDestroy(static_cast<CUgraphExec>(exec_));
  if (graph_ != nullptr) (*driver)->GraphDestroy(static_cast<CUgraph>(graph_));
}

absl::Status CudaGraph::Launch(void* stream) const {
  // The graph was made, so the driver has its entries (GraphDriver): only the context is asked.
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  absl::Status ready = EnsureContext();
  if (!ready.ok()) return ready;
  return CheckCu(
      (*driver)->GraphLaunch(static_cast<CUgraphExec>(exec_), static_cast<CUstream>(stream)),
      "cuGraphLaunch");
}

}  // namespace cinn_like::runtime::cuda
