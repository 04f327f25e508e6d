/// \file GPU test helpers: device memory freed at scope exit, and DLTensor views of it.
#pragma once

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"

namespace cinn_like::testing {

/// Device memory for `bytes` (at least 4), freed at scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    EXPECT_EQ(cinn_like_cuda_malloc(&ptr_, std::max<size_t>(bytes, 4)), 0)
        << cinn_like_get_last_error();
  }
  ~DeviceBuffer() { cinn_like_cuda_free(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

/// A DLTensor view of device memory with `ndim` dims at `shape` (which must outlive it).
inline DLTensor DeviceTensor(void* data, int64_t* shape, int32_t ndim = 1,
                             DLDataType dtype = {kDLFloat, 32, 1}) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCUDA, 0};
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  return t;
}

inline DLTensor DeviceTensor(void* data, std::vector<int64_t>& shape, DLDataType dtype) {
  return DeviceTensor(data, shape.data(), static_cast<int32_t>(shape.size()), dtype);
}

}  // namespace cinn_like::testing
