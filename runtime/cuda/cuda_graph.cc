/// \file CudaGraph: stream capture, instantiation and launch through the driver API.
#include "runtime/cuda/cuda_graph.h"

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/default_workspaces.h"

namespace cinn_like::runtime::cuda {

absl::StatusOr<std::unique_ptr<CudaGraph>> CudaGraph::Capture(
    absl::FunctionRef<absl::Status(void* stream)> record, void* stream) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  const DriverApi& d = **driver;
  absl::Status ready = EnsureContext();
  if (!ready.ok()) return ready;
  CUstream own = nullptr;
  if (stream == nullptr) {
    absl::Status made = CheckCu(d.StreamCreate(&own, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (!made.ok()) return made;
    stream = own;
  }
  auto s = static_cast<CUstream>(stream);
  std::unique_ptr<CudaGraph> out(new CudaGraph());
  absl::Status status =
      CheckCu(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  if (status.ok()) {
    {
      DefaultWorkspaces graph_owned;
      status = record(stream);
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
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  absl::Status ready = EnsureContext();
  if (!ready.ok()) return ready;
  return CheckCu(
      (*driver)->GraphLaunch(static_cast<CUgraphExec>(exec_), static_cast<CUstream>(stream)),
      "cuGraphLaunch");
}

}  // namespace cinn_like::runtime::cuda
