/// \file Loading the CUDA driver by dlopen and making the primary context current.
#include "runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <initializer_list>
#include <mutex>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cinn_like::runtime::cuda {
namespace {

struct Loaded {
  DriverApi api{};
  absl::Status status;
};

Loaded LoadDriver() {
  Loaded out;
  // Never closed: kernels and contexts live until the process exits.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    out.status = absl::UnavailableError(
        absl::StrCat("no CUDA driver: dlopen(libcuda.so.1) failed: ", why ? why : "unknown error"));
    return out;
  }
  auto resolve = [&](auto& fn, const char* name) {
    if (!out.status.ok()) return;
    void* sym = dlsym(lib, name);
    if (!sym) {
      out.status = absl::UnavailableError(
          absl::StrCat("the CUDA driver libcuda.so.1 has no ", name, "; a newer driver is needed"));
      return;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
  };
  auto optional = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
  };
  DriverApi& a = out.api;
  resolve(a.Init, "cuInit");
  resolve(a.DeviceGet, "cuDeviceGet");
  resolve(a.DeviceGetAttribute, "cuDeviceGetAttribute");
  resolve(a.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(a.CtxSetCurrent, "cuCtxSetCurrent");
  resolve(a.CtxGetCurrent, "cuCtxGetCurrent");
  resolve(a.CtxGetDevice, "cuCtxGetDevice");
  resolve(a.ModuleLoadData, "cuModuleLoadData");
  resolve(a.ModuleGetFunction, "cuModuleGetFunction");
  resolve(a.ModuleUnload, "cuModuleUnload");
  resolve(a.LaunchKernel, "cuLaunchKernel");
  resolve(a.GetErrorName, "cuGetErrorName");
  resolve(a.GetErrorString, "cuGetErrorString");
  resolve(a.MemAlloc, "cuMemAlloc_v2");
  resolve(a.MemFree, "cuMemFree_v2");
  resolve(a.MemcpyHtoD, "cuMemcpyHtoD_v2");
  resolve(a.MemcpyDtoH, "cuMemcpyDtoH_v2");
  resolve(a.MemcpyDtoD, "cuMemcpyDtoD_v2");
  resolve(a.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  resolve(a.CtxSynchronize, "cuCtxSynchronize");
  resolve(a.StreamSynchronize, "cuStreamSynchronize");
  resolve(a.EventCreate, "cuEventCreate");
  resolve(a.EventRecord, "cuEventRecord");
  resolve(a.EventSynchronize, "cuEventSynchronize");
  resolve(a.EventElapsedTime, "cuEventElapsedTime");
  resolve(a.EventDestroy, "cuEventDestroy_v2");
  if (out.status.ok()) {
    // Optional: the workspace allocator falls back to cuMemAlloc/cuMemFree without them.
    optional(a.MemAllocAsync, "cuMemAllocAsync");
    optional(a.MemFreeAsync, "cuMemFreeAsync");
    if (!a.MemAllocAsync || !a.MemFreeAsync) a.MemAllocAsync = nullptr, a.MemFreeAsync = nullptr;
    // Optional: CUDA graphs (runtime/cuda/cuda_graph.cc) say which is missing without them.
    optional(a.StreamCreate, "cuStreamCreate");
    optional(a.StreamDestroy, "cuStreamDestroy_v2");
    optional(a.StreamIsCapturing, "cuStreamIsCapturing");
    optional(a.StreamBeginCapture, "cuStreamBeginCapture_v2");
    optional(a.StreamEndCapture, "cuStreamEndCapture");
    optional(a.GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    optional(a.GraphLaunch, "cuGraphLaunch");
    optional(a.GraphExecDestroy, "cuGraphExecDestroy");
    optional(a.GraphDestroy, "cuGraphDestroy");
  }
  return out;
}

/// cuInit and the retained primary context of device 0, once per process.
struct Primary {
  absl::Status status;
  CUcontext context = nullptr;
};

const Primary& PrimaryContext(const DriverApi& d) {
  static std::once_flag once;
  static Primary* primary = new Primary();
  std::call_once(once, [&d] {
    Primary& p = *primary;
    p.status = CheckCu(d.Init(0), "cuInit");
    CUdevice device = 0;
    if (p.status.ok()) p.status = CheckCu(d.DeviceGet(&device, 0), "cuDeviceGet(0)");
    if (p.status.ok()) {
      p.status = CheckCu(d.DevicePrimaryCtxRetain(&p.context, device),
                         "cuDevicePrimaryCtxRetain(device 0)");
    }
  });
  return *primary;
}

}  // namespace

absl::StatusOr<const DriverApi*> Driver() {
  static std::once_flag once;
  static Loaded* loaded = nullptr;
  std::call_once(once, [] { loaded = new Loaded(LoadDriver()); });
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

std::string ErrorText(int result) {
  const char* name = nullptr;
  const char* text = nullptr;
  auto driver = Driver();
  if (driver.ok()) {
    CUresult r = static_cast<CUresult>(result);
    if ((*driver)->GetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
    if ((*driver)->GetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  }
  return absl::StrCat(name ? std::string(name) : absl::StrCat("CUresult ", result), ": ",
                      text ? text : "unknown error");
}

absl::Status CheckCu(int result, const std::string& what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " failed: ", ErrorText(result)));
}

absl::Status EnsureContext() {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  const DriverApi& d = **driver;
  // Any current context (ours, or the framework's on device 0) is used as it is.
  CUcontext current = nullptr;
  if (d.CtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr) return absl::OkStatus();
  const Primary& primary = PrimaryContext(d);
  if (!primary.status.ok()) return primary.status;
  return CheckCu(d.CtxSetCurrent(primary.context), "cuCtxSetCurrent(primary context of device 0)");
}

int CurrentDeviceOrdinal() {
  auto driver = Driver();
  if (!driver.ok()) return 0;
  CUcontext current = nullptr;
  if ((*driver)->CtxGetCurrent(&current) != CUDA_SUCCESS || current == nullptr) return 0;
  CUdevice device = 0;
  if ((*driver)->CtxGetDevice(&device) != CUDA_SUCCESS) return 0;
  return static_cast<int>(device);
}

absl::StatusOr<void*> OpenCudaLibrary(const std::string& library,
                                      std::initializer_list<const char*> names) {
  absl::Status ctx = EnsureContext();
  if (!ctx.ok()) return ctx;
  std::string tried;
  for (const char* name : names) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* why = dlerror();
    absl::StrAppend(&tried, tried.empty() ? "" : "; ", why ? why : name);
  }
  return absl::UnavailableError(library + " could not be loaded: " + tried);
}

namespace {

/// Asks device 0 (its primary context made current) for each attribute into its int.
absl::Status AskDevice0(std::initializer_list<std::pair<int*, CUdevice_attribute>> asks) {
  absl::Status s = EnsureContext();
  if (!s.ok()) return s;
  const DriverApi& d = **Driver();
  CUdevice device = 0;
  s = CheckCu(d.DeviceGet(&device, 0), "cuDeviceGet(0)");
  for (const auto& [value, attribute] : asks) {
    if (s.ok()) s = CheckCu(d.DeviceGetAttribute(value, attribute, device), "cuDeviceGetAttribute");
  }
  return s;
}

}  // namespace

absl::StatusOr<int> DeviceComputeCapability() {
  int major = 0, minor = 0;
  absl::Status s = AskDevice0({{&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
                               {&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR}});
  if (!s.ok()) return s;
  return major * 10 + minor;
}

absl::StatusOr<DeviceLimits> DeviceLimitsOf0() {
  DeviceLimits limits;
  absl::Status s = AskDevice0(
      {{&limits.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
       {&limits.max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
       {&limits.shared_memory_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK}});
  if (!s.ok()) return s;
  return limits;
}

}  // namespace cinn_like::runtime::cuda
