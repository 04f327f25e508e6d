/// \file The OpenCL runtime: device selection, program builds and kernel launch.
#include "runtime/opencl/opencl_runtime.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like::runtime::opencl {
namespace {

std::string PlatformString(const Api* api, cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (api->GetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  api->GetPlatformInfo(p, what, n, s.data(), nullptr);
  return std::string(s.c_str());
}

std::string DeviceString(const Api* api, cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (api->GetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  api->GetDeviceInfo(d, what, n, s.data(), nullptr);
  return std::string(s.c_str());
}

template <typename T>
T DeviceValue(const Api* api, cl_device_id d, cl_device_info what) {
  T v{};
  if (api->GetDeviceInfo(d, what, sizeof(T), &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

DeviceInfo Describe(const Api* api, cl_platform_id p, cl_device_id d) {
  DeviceInfo info;
  info.platform = PlatformString(api, p, CL_PLATFORM_NAME);
  info.name = DeviceString(api, d, CL_DEVICE_NAME);
  info.is_cpu = (DeviceValue<cl_device_type>(api, d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  const std::string extensions = " " + DeviceString(api, d, CL_DEVICE_EXTENSIONS) + " ";
  info.fp16 = absl::StrContains(extensions, " cl_khr_fp16 ");
  info.fp64 = absl::StrContains(extensions, " cl_khr_fp64 ") ||
              DeviceValue<cl_device_fp_config>(api, d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  info.correctly_rounded_div_sqrt =
      (DeviceValue<cl_device_fp_config>(api, d, CL_DEVICE_SINGLE_FP_CONFIG) &
       CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  info.compute_units = std::max<int>(1, DeviceValue<cl_uint>(api, d, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.max_work_group_size = std::max<int>(
      1, static_cast<int>(DeviceValue<size_t>(api, d, CL_DEVICE_MAX_WORK_GROUP_SIZE)));
  info.local_memory_bytes =
      static_cast<int64_t>(DeviceValue<cl_ulong>(api, d, CL_DEVICE_LOCAL_MEM_SIZE));
  return info;
}

struct Candidate {
  cl_platform_id platform;
  cl_device_id device;
  DeviceInfo info;
};

absl::StatusOr<std::vector<Candidate>> ListDevices(const Api* api, cl_device_type type) {
  cl_uint n = 0;
  cl_int rc = api->GetPlatformIDs(0, nullptr, &n);
  if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (rc == CL_SUCCESS && n == 0)) {
    return absl::FailedPreconditionError(
        "no OpenCL platform: the ICD loader found none (install pocl-opencl-icd, or set "
        "OCL_ICD_FILENAMES to a vendor library such as libnvidia-opencl.so.1)");
  }
  if (absl::Status s = Check(rc, "clGetPlatformIDs"); !s.ok()) return s;
  std::vector<cl_platform_id> platforms(n);
  if (absl::Status s = Check(api->GetPlatformIDs(n, platforms.data(), nullptr), "clGetPlatformIDs");
      !s.ok()) {
    return s;
  }
  std::vector<Candidate> out;
  for (cl_platform_id p : platforms) {
    cl_uint m = 0;
    if (api->GetDeviceIDs(p, type, 0, nullptr, &m) != CL_SUCCESS || m == 0) continue;
    std::vector<cl_device_id> devices(m);
    if (api->GetDeviceIDs(p, type, m, devices.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : devices) out.push_back({p, d, Describe(api, p, d)});
  }
  return out;
}

}  // namespace

/// Kernel time on this thread (cinn_like_opencl_take_kernel_ns).
thread_local int64_t kernel_ns = 0;

/// Sets the last error; the launch's failure code.
int Fail(const std::string& message) {
  cinn_like_set_last_error(message.c_str());
  return -1;
}

std::string DeviceInfo::Describe() const {
  return absl::StrCat(platform, " / ", name, is_cpu ? " (CPU)" : "");
}

absl::StatusOr<Device*> Device::Select(const std::string& kind, const std::string& spec) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, absl::StatusOr<Device*>>* made =
      new std::map<std::pair<std::string, std::string>, absl::StatusOr<Device*>>();
  std::lock_guard<std::mutex> lock(mu);
  auto found = made->find({kind, spec});
  if (found != made->end()) return found->second;
  auto make = [&]() -> absl::StatusOr<Device*> {
    auto api = GetApi();
    if (!api.ok()) return api.status();
    const cl_device_type type = kind == "cpu"   ? CL_DEVICE_TYPE_CPU
                                : kind == "gpu" ? CL_DEVICE_TYPE_GPU
                                                : CL_DEVICE_TYPE_ALL;
    auto devices = ListDevices(*api, type);
    if (!devices.ok()) return devices.status();
    const Candidate* chosen = nullptr;
    int index = -1;
    if (spec.empty()) {
      if (!devices->empty()) chosen = &(*devices)[0];
    } else if (absl::SimpleAtoi(spec, &index)) {
      if (index >= 0 && index < static_cast<int>(devices->size())) chosen = &(*devices)[index];
    } else {
      for (const Candidate& c : *devices) {
        if (absl::StrContains(absl::AsciiStrToLower(c.info.Describe()),
                              absl::AsciiStrToLower(spec))) {
          chosen = &c;
          break;
        }
      }
    }
    if (!chosen) {
      std::string seen;
      for (size_t i = 0; i < devices->size(); ++i) {
        absl::StrAppend(&seen, "\n  ", i, ": ", (*devices)[i].info.Describe());
      }
      return absl::FailedPreconditionError(
          absl::StrCat("no OpenCL ", kind.empty() ? "" : kind + " ", "device",
                       spec.empty() ? "" : " matches cinn_like_opencl_device='" + spec + "'",
                       devices->empty() ? " is present" : "; the devices are:", seen));
    }
    auto* device = new Device();  // kept for the process, as CUDA's primary context is
    device->info_ = chosen->info;
    device->id_ = chosen->device;
    cl_int rc = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(chosen->platform), 0};
    device->context_ = (*api)->CreateContext(props, 1, &device->id_, nullptr, nullptr, &rc);
    if (absl::Status s = Check(rc, "clCreateContext for " + chosen->info.Describe()); !s.ok()) {
      delete device;
      return s;
    }
    device->queue_ =
        (*api)->CreateCommandQueue(device->context_, device->id_, CL_QUEUE_PROFILING_ENABLE, &rc);
    if (absl::Status s = Check(rc, "clCreateCommandQueue for " + chosen->info.Describe());
        !s.ok()) {
      (*api)->ReleaseContext(device->context_);
      delete device;
      return s;
    }
    return device;
  };
  return made->emplace(std::make_pair(kind, spec), make()).first->second;
}

absl::StatusOr<std::unique_ptr<Program>> Program::Build(Device* device, const std::string& source,
                                                        const std::string& name) {
  auto api = GetApi();
  if (!api.ok()) return api.status();
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int rc = CL_SUCCESS;
  auto program = std::unique_ptr<Program>(new Program());
  program->device_ = device;
  program->name_ = name;
  program->program_ = (*api)->CreateProgramWithSource(device->context(), 1, &text, &length, &rc);
  if (absl::Status s = Check(rc, "clCreateProgramWithSource of " + name); !s.ok()) return s;
  std::string options = "-cl-std=CL1.2";
  if (device->info().correctly_rounded_div_sqrt) {
    options += " -cl-fp32-correctly-rounded-divide-sqrt";
  }
  cl_device_id id = device->id();
  rc = (*api)->BuildProgram(program->program_, 1, &id, options.c_str(), nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    size_t n = 0;
    (*api)->GetProgramBuildInfo(program->program_, id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    if (n)
      (*api)->GetProgramBuildInfo(program->program_, id, CL_PROGRAM_BUILD_LOG, n, log.data(),
                                  nullptr);
    return absl::InvalidArgumentError(absl::StrCat("building OpenCL program ", name, " for ",
                                                   device->info().Describe(), " failed (",
                                                   ErrorName(rc), "):\n", log.c_str()));
  }
  return program;
}

Program::~Program() {
  auto api = GetApi();
  if (!api.ok()) return;
  for (auto& k : kernels_) (*api)->ReleaseKernel(k->handle);
  if (program_) (*api)->ReleaseProgram(program_);
}

absl::StatusOr<Kernel*> Program::GetKernel(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& k : kernels_) {
    if (k->name == name) return k.get();
  }
  auto api = GetApi();
  if (!api.ok()) return api.status();
  cl_int rc = CL_SUCCESS;
  cl_kernel handle = (*api)->CreateKernel(program_, name.c_str(), &rc);
  if (absl::Status s = Check(rc, "clCreateKernel(" + name + ") of program " + name_); !s.ok()) {
    return s;
  }
  auto kernel = std::make_unique<Kernel>();
  kernel->name = name;
  kernel->device = device_;
  kernel->handle = handle;
  kernels_.push_back(std::move(kernel));
  return kernels_.back().get();
}

}  // namespace cinn_like::runtime::opencl

using cinn_like::runtime::opencl::Api;
using cinn_like::runtime::opencl::ErrorName;
using cinn_like::runtime::opencl::Fail;
using cinn_like::runtime::opencl::Kernel;

int cinn_like_opencl_launch(void* kernel_handle, int32_t grid_x, int32_t grid_y, int32_t grid_z,
                            int32_t block_x, int32_t block_y, int32_t block_z, void* stream,
                            const cinn_like_opencl_arg* args, int32_t num_args) {
  if (grid_x <= 0 || grid_y <= 0 || grid_z <= 0) return 0;  // an empty tensor
  auto* kernel = static_cast<Kernel*>(kernel_handle);
  auto launch = [&] {
    return absl::StrCat("OpenCL launch of kernel ", kernel ? kernel->name : "<none>",
                        " with grid (", grid_x, ", ", grid_y, ", ", grid_z, ") work-group (",
                        block_x, ", ", block_y, ", ", block_z, ")");
  };
  if (!kernel) return Fail(launch() + " failed: no kernel handle (was its program built?)");
  if (block_x <= 0 || block_y <= 0 || block_z <= 0 || num_args < 0 || (num_args > 0 && !args)) {
    return Fail(launch() + " failed: work-group dims must be positive and arguments given");
  }
  auto api_or = cinn_like::runtime::opencl::GetApi();
  if (!api_or.ok()) return Fail(launch() + " failed: " + std::string(api_or.status().message()));
  const Api* api = *api_or;
  cinn_like::runtime::opencl::Device* device = kernel->device;
  std::vector<cl_mem> mems(num_args, nullptr);
  std::vector<bool> copied(num_args, false);  // a misaligned buffer, copied to an aligned one
  auto release = [&] {
    for (cl_mem m : mems) {
      if (m) api->ReleaseMemObject(m);
    }
  };
  auto fail = [&](const std::string& what, cl_int rc) {
    release();
    return Fail(absl::StrCat(launch(), " failed: ", what, ": ", ErrorName(rc)));
  };
  // A cl_kernel's arguments are shared state until the enqueue captures them (OpenCL 1.2,
  // clSetKernelArg): held from the first argument to the enqueue, not while the kernel runs.
  std::unique_lock<std::mutex> lock(kernel->mu);
  for (int32_t i = 0; i < num_args; ++i) {
    const cinn_like_opencl_arg& a = args[i];
    cl_int rc = CL_SUCCESS;
    if (a.kind == CINN_LIKE_OPENCL_SCALAR) {
      rc = api->SetKernelArg(kernel->handle, i, static_cast<size_t>(a.bytes), a.value);
    } else {
      void* data = *static_cast<void* const*>(a.value);
      if (data && a.bytes > 0) {
        copied[i] = reinterpret_cast<uintptr_t>(data) %
                        cinn_like::runtime::opencl::kOpenCLBufferAlignment !=
                    0;
        mems[i] = api->CreateBuffer(
            device->context(),
            CL_MEM_READ_WRITE | (copied[i] ? CL_MEM_COPY_HOST_PTR : CL_MEM_USE_HOST_PTR),
            static_cast<size_t>(a.bytes), data, &rc);
        if (rc != CL_SUCCESS)
          return fail(absl::StrCat("wrapping argument ", i, " (", a.bytes, " bytes) in a buffer"),
                      rc);
      }
      rc = api->SetKernelArg(kernel->handle, i, sizeof(cl_mem), mems[i] ? &mems[i] : nullptr);
    }
    if (rc != CL_SUCCESS) return fail(absl::StrCat("setting argument ", i), rc);
  }
  const size_t local[3] = {static_cast<size_t>(block_x), static_cast<size_t>(block_y),
                           static_cast<size_t>(block_z)};
  const size_t global[3] = {local[0] * grid_x, local[1] * grid_y, local[2] * grid_z};
  cl_event done = nullptr;
  cl_int rc = api->EnqueueNDRangeKernel(device->queue(), kernel->handle, 3, nullptr, global, local,
                                        0, nullptr, &done);
  lock.unlock();
  if (rc != CL_SUCCESS) return fail("clEnqueueNDRangeKernel", rc);
  // The written buffers back in host memory (a no-op where the device works in place).
  for (int32_t i = 0; i < num_args && rc == CL_SUCCESS; ++i) {
    if (!mems[i] || args[i].kind != CINN_LIKE_OPENCL_OUTPUT) continue;
    if (copied[i]) {
      rc = api->EnqueueReadBuffer(device->queue(), mems[i], CL_TRUE, 0,
                                  static_cast<size_t>(args[i].bytes),
                                  *static_cast<void* const*>(args[i].value), 0, nullptr, nullptr);
      continue;
    }
    void* mapped =
        api->EnqueueMapBuffer(device->queue(), mems[i], CL_TRUE, CL_MAP_READ, 0,
                              static_cast<size_t>(args[i].bytes), 0, nullptr, nullptr, &rc);
    if (rc == CL_SUCCESS)
      rc = api->EnqueueUnmapMemObject(device->queue(), mems[i], mapped, 0, nullptr, nullptr);
  }
  // Waited for however the read-back went: the kernel must not write caller memory after the
  // call returned (an error included).
  const cl_int finished = api->Finish(device->queue());
  if (rc == CL_SUCCESS) rc = finished;
  if (rc == CL_SUCCESS && done) {
    cl_ulong start = 0, end = 0;
    if (api->GetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof(start), &start,
                                   nullptr) == CL_SUCCESS &&
        api->GetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) ==
            CL_SUCCESS &&
        end >= start) {
      cinn_like::runtime::opencl::kernel_ns += static_cast<int64_t>(end - start);
    }
  }
  if (done) api->ReleaseEvent(done);
  if (rc != CL_SUCCESS) return fail("running it", rc);
  release();
  return 0;
}

int64_t cinn_like_opencl_take_kernel_ns(void) {
  const int64_t ns = cinn_like::runtime::opencl::kernel_ns;
  cinn_like::runtime::opencl::kernel_ns = 0;
  return ns;
}
