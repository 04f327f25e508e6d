/// \file The workspace allocation hook: what JIT host code calls to allocate intermediates,
/// and the defaults it falls back to (aligned blocks kept for reuse on CPU, the CUDA driver on
/// GPU).
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cpu_block_cache.h"
#include "runtime/default_workspaces.h"
#include "runtime/device_name.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace {

using cinn_like::runtime::DeviceName;

constexpr size_t kAlignment = 64;

struct Hook {
  cinn_like_alloc_fn alloc = nullptr;  // null: the defaults
  cinn_like_free_fn free = nullptr;
  void* ctx = nullptr;
};

std::mutex hook_mutex;
Hook hook;
// How many DefaultWorkspaces scopes this thread is in: while any is, the hook is not asked.
thread_local int default_scopes = 0;

Hook CurrentHook() {
  if (default_scopes > 0) return Hook{};
  std::lock_guard<std::mutex> lock(hook_mutex);
  return hook;
}

std::string What(int32_t device_type, size_t bytes) {
  return absl::StrCat("allocation of a ", bytes, "-byte workspace on ", DeviceName(device_type));
}

void* Fail(const std::string& message) {
  cinn_like_set_last_error(message.c_str());
  return nullptr;
}

void* DefaultAlloc(int32_t device_type, size_t bytes, void* stream) {
  switch (device_type) {
    case kDLCPU: {
      if (bytes > SIZE_MAX - kAlignment) {
        return Fail(What(device_type, bytes) + " failed: the size is out of range");
      }
      // Large blocks are kept for the next call (runtime/cpu_block_cache.h says why).
      void* p = cinn_like::runtime::CpuBlockAlloc(bytes);
      if (!p) return Fail(What(device_type, bytes) + " failed: out of host memory");
      return p;
    }
#ifdef CINN_LIKE_WITH_CUDA
    case kDLCUDA: {
      void* p = nullptr;
      if (cinn_like_cuda_workspace_alloc(&p, bytes, stream) != 0) {
        // Keep the driver's message, in front of which the failed size is named.
        return Fail(
            absl::StrCat(What(device_type, bytes), " failed: ", cinn_like_get_last_error()));
      }
      return p;
    }
#endif
    default:
      return Fail(What(device_type, bytes) + " failed: this build has no allocator for it");
  }
}

int DefaultFree(int32_t device_type, void* ptr, void* stream) {
  switch (device_type) {
    case kDLCPU:
      cinn_like::runtime::CpuBlockFree(ptr);
      return 0;
#ifdef CINN_LIKE_WITH_CUDA
    case kDLCUDA:
      return cinn_like_cuda_workspace_free(ptr, stream);
#endif
    default:
      cinn_like_set_last_error(absl::StrCat("free of a workspace on ", DeviceName(device_type),
                                            " failed: this build has no allocator for it")
                                   .c_str());
      return -1;
  }
}

/// The device an installed allocator is asked for: the current CUDA context's (a framework's
/// rank on device 1 runs its calls there), 0 for the host.
int32_t DeviceId(int32_t device_type) {
#ifdef CINN_LIKE_WITH_CUDA
  if (device_type == kDLCUDA) return cinn_like::runtime::cuda::CurrentDeviceOrdinal();
#endif
  (void)device_type;
  return 0;
}

}  // namespace

namespace cinn_like::runtime {

DefaultWorkspaces::DefaultWorkspaces() { ++default_scopes; }
DefaultWorkspaces::~DefaultWorkspaces() { --default_scopes; }
bool DefaultWorkspaces::active() { return default_scopes > 0; }

}  // namespace cinn_like::runtime

extern "C" {

int cinn_like_set_allocator(cinn_like_alloc_fn alloc, cinn_like_free_fn free, void* ctx) {
  if ((alloc == nullptr) != (free == nullptr)) {
    cinn_like_set_last_error(
        "cinn_like_set_allocator: give both an alloc and a free function, or neither (to "
        "restore the default allocators)");
    return -1;
  }
  std::lock_guard<std::mutex> lock(hook_mutex);
  hook = Hook{alloc, free, alloc ? ctx : nullptr};
  return 0;
}

void* cinn_like_alloc_workspace(int32_t device_type, size_t bytes, void* stream) {
  Hook h = CurrentHook();
  if (!h.alloc) return DefaultAlloc(device_type, bytes, stream);
  // At least 1 byte: some allocators (PyTorch's) return null for 0.
  const int32_t device_id = DeviceId(device_type);
  void* p = h.alloc(h.ctx, std::max<size_t>(bytes, 1), device_type, device_id, stream);
  if (!p) {
    return Fail(What(device_type, bytes) +
                " failed: the allocator installed by cinn_like_set_allocator returned null");
  }
  if (reinterpret_cast<uintptr_t>(p) % kAlignment != 0) {
    h.free(h.ctx, p, device_type, device_id, stream);
    return Fail(absl::StrCat(What(device_type, bytes),
                             " failed: the allocator installed by cinn_like_set_allocator "
                             "returned a pointer that is not ",
                             kAlignment, "-byte aligned"));
  }
  return p;
}

int cinn_like_free_workspace(int32_t device_type, void* ptr, void* stream) {
  if (ptr == nullptr) return 0;
  Hook h = CurrentHook();
  if (!h.alloc) return DefaultFree(device_type, ptr, stream);
  h.free(h.ctx, ptr, device_type, DeviceId(device_type), stream);
  return 0;
}

}  // extern "C"
