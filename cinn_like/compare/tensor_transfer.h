/// \file Tensors between the reference interpreter and compiled functions: a HostTensor placed
/// on the host or a CUDA device as a DLTensor (to feed a compiled function), and any DLTensor a
/// function reads or writes read back as a HostTensor (to compare with the reference). The
/// accuracy self-checks (cinn_like/verify/), the tuner and the group report
/// (cinn_like/tune/group_timing.h) are their users.
#pragma once

#include <dlpack/dlpack.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/dtype.h"
#include "hlir/host_tensor.h"
#include "ir/target.h"

namespace cinn_like {

/// The DLPack dtype compiled functions expect for `t` (bool: code 6 with 8 bits).
DLDataType DLTypeOf(hlir::DType t);

/// The device a compiled function for `target` takes its tensors on (kDLCPU or kDLCUDA, 0).
DLDevice DeviceOf(const ir::Target& target);

/// A dense row-major tensor owned on the host or on a CUDA device, with its DLTensor view.
class DeviceTensor {
 public:
  /// A copy of `host` on `device` (kDLCPU, or kDLCUDA through the CUDA runtime; an error in a
  /// build without CUDA or without a driver).
  static absl::StatusOr<std::unique_ptr<DeviceTensor>> Create(const hlir::HostTensor& host,
                                                              DLDevice device);
  ~DeviceTensor();
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  DLTensor* dl() { return &dl_; }

 private:
  DeviceTensor() = default;
  std::vector<char> host_bytes_;  // the elements on the host (kDLCPU), or their staging copy
  void* device_data_ = nullptr;   // CUDA memory (kDLCUDA), freed with the tensor
  std::vector<int64_t> shape_;
  DLTensor dl_{};
};

/// The elements of `t` as a HostTensor of `dtype` (whose DLPack type `t` must have), read
/// through its shape, strides (null: row-major) and byte_offset. A CUDA tensor is read after
/// waiting for all work of the device (cinn_like_cuda_synchronize) and copied to the host.
/// Errors say what could not be read; nothing aborts.
absl::StatusOr<hlir::HostTensor> ReadTensor(const DLTensor& t, hlir::DType dtype);

}  // namespace cinn_like
