/// \file The OpenCL API, loaded with dlopen("libOpenCL.so.1") (the ICD loader) at first use, so
/// that every binary starts where OpenCL is absent; a missing library is a status, not a crash.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>  // types only: no symbol of libOpenCL is linked

#include "absl/status/statusor.h"

namespace cinn_like::runtime::opencl {

/// The entry points cinn_like uses, named like the API without "cl" (OpenCL 1.2: both PoCL and
/// NVIDIA's ICD export them).
struct Api {
  cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*);
  cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void*, size_t*);
  cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*);
  cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void*, size_t*);
  cl_context (*CreateContext)(const cl_context_properties*, cl_uint, const cl_device_id*,
                              void(CL_CALLBACK*)(const char*, const void*, size_t, void*), void*,
                              cl_int*);
  cl_int (*ReleaseContext)(cl_context);
  cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties,
                                         cl_int*);
  cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char**, const size_t*, cl_int*);
  cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*,
                         void(CL_CALLBACK*)(cl_program, void*), void*);
  cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void*,
                                size_t*);
  cl_int (*ReleaseProgram)(cl_program);
  cl_kernel (*CreateKernel)(cl_program, const char*, cl_int*);
  cl_int (*ReleaseKernel)(cl_kernel);
  cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void*);
  cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                                 const size_t*, cl_uint, const cl_event*, cl_event*);
  cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void*, cl_int*);
  cl_int (*ReleaseMemObject)(cl_mem);
  void* (*EnqueueMapBuffer)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t,
                            cl_uint, const cl_event*, cl_event*, cl_int*);
  cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint,
                              const cl_event*, cl_event*);
  cl_int (*EnqueueUnmapMemObject)(cl_command_queue, cl_mem, void*, cl_uint, const cl_event*,
                                  cl_event*);
  cl_int (*Finish)(cl_command_queue);
  cl_int (*GetEventProfilingInfo)(cl_event, cl_profiling_info, size_t, void*, size_t*);
  cl_int (*ReleaseEvent)(cl_event);
};

/// The resolved API, loaded on the first call (thread-safe, cached, success or failure), or
/// Unavailable: "no OpenCL: dlopen(libOpenCL.so.1) failed: <dlerror>".
absl::StatusOr<const Api*> GetApi();

/// The name of an OpenCL status code ("CL_BUILD_PROGRAM_FAILURE"), or "OpenCL error <code>".
std::string ErrorName(cl_int code);

/// OK for CL_SUCCESS, else Internal "<what>: <ErrorName(code)>".
absl::Status Check(cl_int code, const std::string& what);

}  // namespace cinn_like::runtime::opencl
