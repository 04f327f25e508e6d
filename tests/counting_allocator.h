/// \file A workspace allocator for tests that counts what the runtime's hook asks of it,
/// can refuse the k-th allocation, and delegates to the runtime's defaults.
#pragma once

#include <dlpack/dlpack.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <vector>

#include "runtime/cinn_like_runtime.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace cinn_like::testing {

/// Installed by its constructor through cinn_like_set_allocator, removed by its destructor.
class CountingAllocator {
 public:
  /// `fail_at`: the 1-based allocation that returns null (0: none fails).
  explicit CountingAllocator(int fail_at = 0) : fail_at_(fail_at) {
    ok_ = cinn_like_set_allocator(&Alloc, &Free, this) == 0;
  }
  ~CountingAllocator() { cinn_like_set_allocator(nullptr, nullptr, nullptr); }
  CountingAllocator(const CountingAllocator&) = delete;
  CountingAllocator& operator=(const CountingAllocator&) = delete;

  bool installed() const { return ok_; }
  int allocs = 0;  // successful allocations
  int frees = 0;
  int refused = 0;
  std::vector<size_t> bytes;          // of each successful allocation
  std::vector<int32_t> device_types;  // of each call, allocations and frees
  std::vector<void*> streams;         // of each allocation
  size_t live_bytes = 0;              // allocated and not yet freed
  size_t peak_bytes = 0;              // the most live at once

 private:
  static void* Alloc(void* ctx, size_t bytes, int32_t device_type, int32_t device_id,
                     void* stream) {
    auto* self = static_cast<CountingAllocator*>(ctx);
    self->device_types.push_back(device_type);
    self->streams.push_back(stream);
    if (self->fail_at_ > 0 && self->allocs + self->refused + 1 == self->fail_at_) {
      ++self->refused;
      return nullptr;
    }
    void* p = nullptr;
    if (device_type == kDLCPU) {
      p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
#ifdef CINN_LIKE_WITH_CUDA
    } else if (device_type == kDLCUDA) {
      if (cinn_like_cuda_workspace_alloc(&p, bytes, stream) != 0) p = nullptr;
#endif
    }
    if (p) {
      ++self->allocs;
      self->bytes.push_back(bytes);
      self->sizes_[p] = bytes;
      self->live_bytes += bytes;
      self->peak_bytes = std::max(self->peak_bytes, self->live_bytes);
    }
    return p;
  }
  static void Free(void* ctx, void* ptr, int32_t device_type, int32_t device_id, void* stream) {
    auto* self = static_cast<CountingAllocator*>(ctx);
    self->device_types.push_back(device_type);
    ++self->frees;
    auto it = self->sizes_.find(ptr);
    if (it != self->sizes_.end()) {
      self->live_bytes -= it->second;
      self->sizes_.erase(it);
    }
    if (device_type == kDLCPU) std::free(ptr);
#ifdef CINN_LIKE_WITH_CUDA
    if (device_type == kDLCUDA) cinn_like_cuda_workspace_free(ptr, stream);
#endif
  }

  int fail_at_;
  bool ok_ = false;
  std::map<void*, size_t> sizes_;  // of each live allocation
};

}  // namespace cinn_like::testing
