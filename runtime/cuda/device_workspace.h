/// \file A library call's device workspace (cuDNN, cuBLASLt): from the runtime's allocation
/// hook (PyTorch's caching allocator under torch.compile, so CUDA-graph captures take it from
/// the graph's pool) on the call's stream, freed stream-ordered when the scope ends.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like::runtime::cuda {

class DeviceWorkspace {
 public:
  /// No allocation for 0 bytes (get() is null, failed() false).
  DeviceWorkspace(size_t bytes, void* stream) : bytes_(bytes), stream_(stream) {
    if (bytes_ > 0) data_ = cinn_like_alloc_workspace(kCuda, bytes_, stream_);
  }
  ~DeviceWorkspace() {
    if (data_) cinn_like_free_workspace(kCuda, data_, stream_);
  }
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;

  void* get() const { return data_; }
  bool failed() const { return bytes_ > 0 && !data_; }
  /// ResourceExhausted "<what>: workspace of <bytes> bytes: <the hook's message>".
  absl::Status Error(const std::string& what) const {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": workspace of ", bytes_, " bytes: ", cinn_like_get_last_error()));
  }

 private:
  static constexpr int32_t kCuda = 2;  // kDLCUDA
  size_t bytes_;
  void* stream_;
  void* data_ = nullptr;
};

}  // namespace cinn_like::runtime::cuda
