/// \file The OpenCL entry points, resolved once with dlopen/dlsym.
#include "runtime/opencl/opencl_api.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace cinn_like::runtime::opencl {
namespace {

absl::StatusOr<const Api*> Load() {
  // The ICD loader honours OCL_ICD_FILENAMES / OCL_ICD_VENDORS, which pick the platforms.
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return absl::UnavailableError(
        absl::StrCat("no OpenCL: dlopen(libOpenCL.so.1) failed: ", why ? why : "unknown reason"));
  }
  static Api api;
  std::string missing;
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn) absl::StrAppend(&missing, missing.empty() ? "" : ", ", name);
  };
  bind(api.GetPlatformIDs, "clGetPlatformIDs");
  bind(api.GetPlatformInfo, "clGetPlatformInfo");
  bind(api.GetDeviceIDs, "clGetDeviceIDs");
  bind(api.GetDeviceInfo, "clGetDeviceInfo");
  bind(api.CreateContext, "clCreateContext");
  bind(api.ReleaseContext, "clReleaseContext");
  bind(api.CreateCommandQueue, "clCreateCommandQueue");
  bind(api.CreateProgramWithSource, "clCreateProgramWithSource");
  bind(api.BuildProgram, "clBuildProgram");
  bind(api.GetProgramBuildInfo, "clGetProgramBuildInfo");
  bind(api.ReleaseProgram, "clReleaseProgram");
  bind(api.CreateKernel, "clCreateKernel");
  bind(api.ReleaseKernel, "clReleaseKernel");
  bind(api.SetKernelArg, "clSetKernelArg");
  bind(api.EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  bind(api.CreateBuffer, "clCreateBuffer");
  bind(api.ReleaseMemObject, "clReleaseMemObject");
  bind(api.EnqueueMapBuffer, "clEnqueueMapBuffer");
  bind(api.EnqueueReadBuffer, "clEnqueueReadBuffer");
  bind(api.EnqueueUnmapMemObject, "clEnqueueUnmapMemObject");
  bind(api.Finish, "clFinish");
  bind(api.GetEventProfilingInfo, "clGetEventProfilingInfo");
  bind(api.ReleaseEvent, "clReleaseEvent");
  if (!missing.empty()) {
    return absl::UnavailableError("libOpenCL.so.1 lacks the entry points " + missing);
  }
  return &api;
}

}  // namespace

absl::StatusOr<const Api*> GetApi() {
  static const absl::StatusOr<const Api*> api = Load();
  return api;
}

std::string ErrorName(cl_int code) {
  switch (code) {
#define CINN_LIKE_CL_ERROR(name) \
  case name:                     \
    return #name;
    CINN_LIKE_CL_ERROR(CL_SUCCESS)
    CINN_LIKE_CL_ERROR(CL_DEVICE_NOT_FOUND)
    CINN_LIKE_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    CINN_LIKE_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    CINN_LIKE_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    CINN_LIKE_CL_ERROR(CL_OUT_OF_RESOURCES)
    CINN_LIKE_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    CINN_LIKE_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    CINN_LIKE_CL_ERROR(CL_MEM_COPY_OVERLAP)
    CINN_LIKE_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    CINN_LIKE_CL_ERROR(CL_MAP_FAILURE)
    CINN_LIKE_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    CINN_LIKE_CL_ERROR(CL_INVALID_VALUE)
    CINN_LIKE_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    CINN_LIKE_CL_ERROR(CL_INVALID_PLATFORM)
    CINN_LIKE_CL_ERROR(CL_INVALID_DEVICE)
    CINN_LIKE_CL_ERROR(CL_INVALID_CONTEXT)
    CINN_LIKE_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    CINN_LIKE_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    CINN_LIKE_CL_ERROR(CL_INVALID_HOST_PTR)
    CINN_LIKE_CL_ERROR(CL_INVALID_MEM_OBJECT)
    CINN_LIKE_CL_ERROR(CL_INVALID_BINARY)
    CINN_LIKE_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    CINN_LIKE_CL_ERROR(CL_INVALID_PROGRAM)
    CINN_LIKE_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    CINN_LIKE_CL_ERROR(CL_INVALID_KERNEL_NAME)
    CINN_LIKE_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    CINN_LIKE_CL_ERROR(CL_INVALID_KERNEL)
    CINN_LIKE_CL_ERROR(CL_INVALID_ARG_INDEX)
    CINN_LIKE_CL_ERROR(CL_INVALID_ARG_VALUE)
    CINN_LIKE_CL_ERROR(CL_INVALID_ARG_SIZE)
    CINN_LIKE_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    CINN_LIKE_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    CINN_LIKE_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    CINN_LIKE_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    CINN_LIKE_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    CINN_LIKE_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    CINN_LIKE_CL_ERROR(CL_INVALID_EVENT)
    CINN_LIKE_CL_ERROR(CL_INVALID_OPERATION)
    CINN_LIKE_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    CINN_LIKE_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
#undef CINN_LIKE_CL_ERROR
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return absl::StrCat("OpenCL error ", code);
  }
}

absl::Status Check(cl_int code, const std::string& what) {
  if (code == CL_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", ErrorName(code)));
}

}  // namespace cinn_like::runtime::opencl
