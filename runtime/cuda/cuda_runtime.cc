/// \file The CUDA runtime C ABI over the dlopen()ed driver.
#include "runtime/cuda/cuda_runtime.h"

#include <atomic>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/default_workspaces.h"
#include "runtime/index_check.h"

namespace {

namespace cuda = cinn_like::runtime::cuda;

/// Sets the last error to `message` and returns -1.
int Fail(const std::string& message) {
  cinn_like_set_last_error(message.c_str());
  return -1;
}

/// The driver with a current context on this thread, or null with the last error set to
/// "<context()>: <why>" (for instance "no CUDA driver: dlopen(libcuda.so.1) failed: ...");
/// `context` is called only then.
template <typename Context>
const cuda::DriverApi* ReadyOr(Context&& context) {
  absl::Status s = cuda::EnsureContext();
  if (!s.ok()) {
    Fail(absl::StrCat(context(), ": ", s.message()));
    return nullptr;
  }
  return *cuda::Driver();
}

const cuda::DriverApi* Ready(const std::string& context) {
  return ReadyOr([&] { return context; });
}

/// 0 for CUDA_SUCCESS, else -1 with "<what> failed: <ErrorText>".
int Check(CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return 0;
  return Fail(absl::StrCat(what, " failed: ", cuda::ErrorText(r)));
}

/// Set when the device refuses memory pools (cuMemAllocAsync gives CUDA_ERROR_NOT_SUPPORTED,
/// at the first workspace allocation, so no pool pointer exists yet): from then on both the
/// workspace allocation and its free use the synchronous calls.
std::atomic<bool> no_pools{false};

}  // namespace

extern "C" {

int cinn_like_cuda_launch(void* function, const char* kernel_name, int32_t grid_x, int32_t grid_y,
                          int32_t grid_z, int32_t block_x, int32_t block_y, int32_t block_z,
                          int32_t shared_mem_bytes, void* stream, void** args, int32_t num_args) {
  if (grid_x <= 0 || grid_y <= 0 || grid_z <= 0) return 0;  // an empty tensor
  // Messages are formatted only once something failed: a launch is on every call's path.
  auto launch = [&] {
    return absl::StrCat("launch of kernel ", kernel_name ? kernel_name : "<unnamed>",
                        " with grid (", grid_x, ", ", grid_y, ", ", grid_z, ") block (", block_x,
                        ", ", block_y, ", ", block_z, ")");
  };
  if (function == nullptr) {
    return Fail(launch() + " failed: no kernel handle (was its CUDA module loaded?)");
  }
  if (block_x <= 0 || block_y <= 0 || block_z <= 0 || shared_mem_bytes < 0) {
    return Fail(absl::StrCat(launch(), " failed: block dims must be positive and shared memory (",
                             shared_mem_bytes, " bytes) non-negative"));
  }
  const cuda::DriverApi* d = ReadyOr(
      [&] { return absl::StrCat("launch of kernel ", kernel_name ? kernel_name : "<unnamed>"); });
  if (!d) return -1;
  CUresult r =
      d->LaunchKernel(static_cast<CUfunction>(function), grid_x, grid_y, grid_z, block_x, block_y,
                      block_z, shared_mem_bytes, static_cast<CUstream>(stream), args, nullptr);
  return r == CUDA_SUCCESS ? 0 : Check(r, launch());
}

int cinn_like_cuda_launch_realigned(void* function, const char* kernel_name, int32_t grid_x,
                                    int32_t grid_y, int32_t grid_z, int32_t block_x,
                                    int32_t block_y, int32_t block_z, int32_t shared_mem_bytes,
                                    void* stream, void** args, int32_t num_args,
                                    const cinn_like_aligned_arg* aligned, int32_t num_aligned) {
  if (grid_x <= 0 || grid_y <= 0 || grid_z <= 0) return 0;  // an empty tensor
  const std::string name = kernel_name ? kernel_name : "<unnamed>";
  if (num_args < 0 || num_aligned < 0 || (num_args > 0 && !args) || (num_aligned > 0 && !aligned)) {
    return Fail(absl::StrCat("realigned launch of kernel ", name, ": ", num_args, " arguments and ",
                             num_aligned, " aligned ones, with null arrays"));
  }
  for (int32_t k = 0; k < num_aligned; ++k) {
    const cinn_like_aligned_arg& a = aligned[k];
    if (a.index < 0 || a.index >= num_args || !args[a.index] || a.alignment <= 0 ||
        (a.alignment & (a.alignment - 1)) != 0 || a.bytes < 0) {
      return Fail(absl::StrCat("realigned launch of kernel ", name, ": aligned argument ", k,
                               " (index ", a.index, ", alignment ", a.alignment, ", ", a.bytes,
                               " bytes) does not describe one of its ", num_args, " arguments"));
    }
  }
  const cuda::DriverApi* d = Ready("realigned launch of kernel " + name);
  if (!d) return -1;
  auto s = static_cast<CUstream>(stream);
  std::vector<void*> params(args, args + num_args);
  struct Copy {
    CUdeviceptr original, copy;
    size_t bytes;
    bool written;
  };
  std::vector<Copy> copies;
  std::vector<void*> values(num_aligned);  // the copies' addresses, which params point at
  int rc = 0;
  for (int32_t k = 0; k < num_aligned && rc == 0; ++k) {
    const cinn_like_aligned_arg& a = aligned[k];
    void* p = *static_cast<void**>(args[a.index]);
    if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(a.alignment) == 0) continue;
    const size_t bytes = static_cast<size_t>(a.bytes);
    values[k] = cinn_like_alloc_workspace(kDLCUDA, bytes, stream);
    if (!values[k]) {  // the copies made so far are freed below
      rc = Fail(absl::StrCat("realigned launch of kernel ", name, ": no aligned copy of argument ",
                             a.index, ": ", cinn_like_get_last_error()));
      break;
    }
    copies.push_back({reinterpret_cast<CUdeviceptr>(p), reinterpret_cast<CUdeviceptr>(values[k]),
                      bytes, a.written != 0});
    params[a.index] = &values[k];
    if (bytes > 0) {
      rc = Check(
          d->MemcpyDtoDAsync(copies.back().copy, copies.back().original, bytes, s),
          absl::StrCat("copying argument ", a.index, " of kernel ", name, " to an aligned buffer"));
    }
  }
  if (rc == 0) {
    rc = cinn_like_cuda_launch(function, kernel_name, grid_x, grid_y, grid_z, block_x, block_y,
                               block_z, shared_mem_bytes, stream, params.data(), num_args);
  }
  for (const Copy& c : copies) {
    if (rc == 0 && c.written && c.bytes > 0) {
      rc = Check(d->MemcpyDtoDAsync(c.original, c.copy, c.bytes, s),
                 absl::StrCat("copying kernel ", name, "'s output back from its aligned buffer"));
    }
  }
  const std::string first_error = rc == 0 ? "" : cinn_like_get_last_error();
  for (const Copy& c : copies) {
    const int freed = cinn_like_free_workspace(kDLCUDA, reinterpret_cast<void*>(c.copy), stream);
    if (rc == 0) rc = freed;
  }
  if (!first_error.empty()) cinn_like_set_last_error(first_error.c_str());  // not a free's
  return rc;
}

int cinn_like_cuda_malloc(void** ptr, size_t bytes) {
  if (ptr == nullptr) return Fail("cinn_like_cuda_malloc: the output pointer is null");
  *ptr = nullptr;
  std::string what = absl::StrCat("cinn_like_cuda_malloc(", bytes, " bytes)");
  const cuda::DriverApi* d = Ready(what);
  if (!d) return -1;
  CUdeviceptr p = 0;
  if (Check(d->MemAlloc(&p, bytes == 0 ? 1 : bytes), what)) return -1;
  *ptr = reinterpret_cast<void*>(p);
  return 0;
}

int cinn_like_cuda_free(void* ptr) {
  if (ptr == nullptr) return 0;
  const cuda::DriverApi* d = Ready("cinn_like_cuda_free");
  if (!d) return -1;
  return Check(d->MemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cinn_like_cuda_free");
}

int cinn_like_cuda_workspace_alloc(void** ptr, size_t bytes, void* stream) {
  *ptr = nullptr;
  std::string what = absl::StrCat("cuda workspace allocation of ", bytes, " bytes");
  const cuda::DriverApi* d = Ready(what);
  if (!d) return -1;
  CUdeviceptr p = 0;
  size_t size = bytes == 0 ? 1 : bytes;
  if (d->MemAllocAsync && !no_pools.load()) {
    CUresult r = d->MemAllocAsync(&p, size, static_cast<CUstream>(stream));
    if (r != CUDA_ERROR_NOT_SUPPORTED) {
      if (Check(r, what + ": cuMemAllocAsync")) return -1;
      *ptr = reinterpret_cast<void*>(p);
      return 0;
    }
    no_pools.store(true);
  }
  // A CUDA graph capture could not record a cuMemAlloc.
  if (cinn_like::runtime::DefaultWorkspaces::active()) {
    return Fail(what + " in a CUDA graph capture: the capture records workspaces only as " +
                "stream-ordered allocations (memory pools), which this device or driver lacks");
  }
  if (Check(d->MemAlloc(&p, size), what + ": cuMemAlloc")) return -1;
  *ptr = reinterpret_cast<void*>(p);
  return 0;
}

int cinn_like_cuda_workspace_free(void* ptr, void* stream) {
  if (ptr == nullptr) return 0;
  const cuda::DriverApi* d = Ready("cuda workspace free");
  if (!d) return -1;
  auto dptr = reinterpret_cast<CUdeviceptr>(ptr);
  auto s = static_cast<CUstream>(stream);
  if (d->MemFreeAsync && !no_pools.load()) {
    return Check(d->MemFreeAsync(dptr, s), "cuda workspace free: cuMemFreeAsync");
  }
  // Kernels on `stream` may still read the buffer: wait for them before a synchronous free.
  if (Check(d->StreamSynchronize(s), "cuda workspace free: cuStreamSynchronize")) return -1;
  return Check(d->MemFree(dptr), "cuda workspace free: cuMemFree");
}

int cinn_like_cuda_memcpy_to_device(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return 0;
  std::string what = absl::StrCat("cinn_like_cuda_memcpy_to_device(", bytes, " bytes)");
  const cuda::DriverApi* d = Ready(what);
  if (!d) return -1;
  return Check(d->MemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes), what);
}

int cinn_like_cuda_memcpy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return 0;
  std::string what = absl::StrCat("cinn_like_cuda_memcpy_to_host(", bytes, " bytes)");
  const cuda::DriverApi* d = Ready(what);
  if (!d) return -1;
  return Check(d->MemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes), what);
}

int cinn_like_cuda_synchronize(void) {
  const cuda::DriverApi* d = Ready("cinn_like_cuda_synchronize");
  if (!d) return -1;
  CUresult r = d->CtxSynchronize();
  if (r == CUDA_SUCCESS) return 0;
  return Fail(
      absl::StrCat("cinn_like_cuda_synchronize: cuCtxSynchronize failed: ", cuda::ErrorText(r),
                   " (faults of kernels launched earlier surface here; after a kernel "
                   "fault the context is unusable and later CUDA calls fail too)"));
}

int cinn_like_cuda_check_indices(const void* indices, void* out, int64_t count, int64_t bits,
                                 int64_t low, int64_t high, const char* what, void* /*stream*/) {
  if (count <= 0) return 0;
  if (bits != 32 && bits != 64) {
    return cinn_like::runtime::CheckIndices(nullptr, 1, bits, low, high, what);
  }
  std::vector<unsigned char> host(static_cast<size_t>(count) * (bits / 8));
  if (cinn_like_cuda_synchronize() != 0 ||
      cinn_like_cuda_memcpy_to_host(host.data(), indices, host.size()) != 0) {
    return -1;
  }
  if (cinn_like::runtime::CheckIndices(host.data(), count, bits, low, high, what) != 0) return 1;
  return cinn_like_cuda_memcpy_to_device(out, host.data(), host.size());
}

int cinn_like_cuda_device_arch(int32_t* arch) {
  if (arch == nullptr) return Fail("cinn_like_cuda_device_arch: the output pointer is null");
  auto cc = cuda::DeviceComputeCapability();
  if (!cc.ok()) return Fail(absl::StrCat("cinn_like_cuda_device_arch: ", cc.status().message()));
  *arch = *cc;
  return 0;
}

}  // extern "C"
