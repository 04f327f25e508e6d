/// \file Work captured into a CUDA graph once and launched again: the C API's
/// cinn_like_call_plan_capture. A launch replays the recorded kernels, library calls, copies
/// and workspace allocations on the recorded addresses, with none of the host work that queued
/// them.
#pragma once

#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cinn_like::runtime::cuda {

class CudaGraph {
 public:
  /// Whether a capture on `stream` can begin: the driver has the entries of CUDA graphs and
  /// stream-ordered allocation (the capture's workspaces), and the stream is not being
  /// captured already (by a caller's own capture). Asked before anything is queued.
  static absl::Status CheckCanCapture(void* stream);
  /// Records what `record(stream)` queues on `stream` (a CUstream; null or the legacy or
  /// per-thread default stream: a stream of its own for the capture) in thread-local capture
  /// mode, with workspaces from the driver's stream-ordered allocator (they become the graph's
  /// own memory), and instantiates it. `record`'s error comes back as it is; a capture the
  /// driver refuses (an operation that synchronises) names the driver's error. The stream is
  /// never left capturing.
  static absl::StatusOr<std::unique_ptr<CudaGraph>> Capture(
      absl::FunctionRef<absl::Status(void* stream)> record, void* stream);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  /// Queues one replay on `stream` (null: the legacy default stream).
  absl::Status Launch(void* stream) const;

 private:
  CudaGraph() = default;
  void* graph_ = nullptr;  // CUgraph
  void* exec_ = nullptr;   // CUgraphExec
};

}  // namespace cinn_like::runtime::cuda
