/// \file The CUDA driver API, loaded with dlopen("libcuda.so.1") at first use so that every
/// binary starts on a machine without a driver; a missing driver is a status, not a crash.
#pragma once

#include <cuda.h>  // types only: no symbol of libcuda is linked

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cinn_like::runtime::cuda {

/// The driver entry points cinn_like uses, named like the API without "cu" (the _v2 symbols
/// that cuda.h maps the memory functions to).
struct DriverApi {
  CUresult (*Init)(unsigned int flags);
  CUresult (*DeviceGet)(CUdevice* device, int ordinal);
  CUresult (*DeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*CtxSetCurrent)(CUcontext context);
  CUresult (*CtxGetCurrent)(CUcontext* context);
  CUresult (*CtxGetDevice)(CUdevice* device);
  CUresult (*ModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*ModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*ModuleUnload)(CUmodule module);
  CUresult (*LaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                           unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                           unsigned int block_z, unsigned int shared_mem_bytes, CUstream stream,
                           void** params, void** extra);
  CUresult (*GetErrorName)(CUresult result, const char** name);
  CUresult (*GetErrorString)(CUresult result, const char** text);
  CUresult (*MemAlloc)(CUdeviceptr* ptr, size_t bytes);                    // _v2
  CUresult (*MemFree)(CUdeviceptr ptr);                                    // _v2
  CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);  // _v2
  CUresult (*MemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);        // _v2
  CUresult (*MemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);  // _v2
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              CUstream stream);  // _v2
  CUresult (*CtxSynchronize)();
  CUresult (*StreamSynchronize)(CUstream stream);
  // Events, for timing device work (benchmarks).
  CUresult (*EventCreate)(CUevent* event, unsigned int flags);
  CUresult (*EventRecord)(CUevent event, CUstream stream);
  CUresult (*EventSynchronize)(CUevent event);
  CUresult (*EventElapsedTime)(float* ms, CUevent start, CUevent end);
  CUresult (*EventDestroy)(CUevent event);  // _v2
  // Streams and CUDA graphs (cinn_like_call_plan_capture: runtime/cuda/cuda_graph.h);
  // optional: null when the driver lacks them (CUDA graphs then refuse, naming the entry).
  CUresult (*StreamCreate)(CUstream* stream, unsigned int flags);
  CUresult (*StreamDestroy)(CUstream stream);  // _v2
  CUresult (*StreamIsCapturing)(CUstream stream, CUstreamCaptureStatus* status);
  CUresult (*StreamBeginCapture)(CUstream stream, CUstreamCaptureMode mode);  // _v2
  CUresult (*StreamEndCapture)(CUstream stream, CUgraph* graph);
  CUresult (*GraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);
  CUresult (*GraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*GraphExecDestroy)(CUgraphExec exec);
  CUresult (*GraphDestroy)(CUgraph graph);
  // Stream-ordered allocation (CUDA 11.2+); optional: null when the driver lacks them.
  CUresult (*MemAllocAsync)(CUdeviceptr* ptr, size_t bytes, CUstream stream);
  CUresult (*MemFreeAsync)(CUdeviceptr ptr, CUstream stream);
};

/// The resolved API, loaded on the first call (thread-safe, cached, success or failure), or
/// Unavailable: "no CUDA driver: dlopen(libcuda.so.1) failed: <dlerror>".
absl::StatusOr<const DriverApi*> Driver();

/// cuInit and device 0's primary context, made current on the calling thread; cheap when a
/// context is already current.
absl::Status EnsureContext();

/// The ordinal of the current context's device (a framework's `set_device(1)` makes device
/// 1's primary context current), 0 when no context is current or no driver loads: where the
/// workspace a call allocates must live.
int CurrentDeviceOrdinal();

/// A CUDA library (cuBLAS, cuBLASLt) for JIT code: the primary context made current first (the
/// library adopts it), then the first of `names` that dlopen() loads, symbols bound locally.
/// Unavailable "<library> could not be loaded: <why each name failed>".
absl::StatusOr<void*> OpenCudaLibrary(const std::string& library,
                                      std::initializer_list<const char*> names);

/// Compute capability of device 0 as major*10+minor (90 for an H100).
absl::StatusOr<int> DeviceComputeCapability();

/// Device 0's multiprocessor count, most threads per block and shared memory per block (bytes).
struct DeviceLimits {
  int multiprocessors = 0, max_threads_per_block = 0, shared_memory_per_block = 0;
};
absl::StatusOr<DeviceLimits> DeviceLimitsOf0();

/// "CUDA_ERROR_INVALID_VALUE: invalid argument" for a CUresult.
std::string ErrorText(int result);

/// Ok for CUDA_SUCCESS; else Internal "<what> failed: <ErrorText>".
absl::Status CheckCu(int result, const std::string& what);

}  // namespace cinn_like::runtime::cuda
