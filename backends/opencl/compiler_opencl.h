/// \file The OpenCL backend: a split module to OpenCL C, built by the device's OpenCL compiler,
/// and host LLVM IR that launches its kernels.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "ir/target.h"

namespace cinn_like::backends {

/// A compiler for an OpenCL device: the target's kind (-device=cpu|gpu) and the flag
/// cinn_like_opencl_device choose it (runtime/opencl/opencl_runtime.h). FailedPrecondition
/// naming the devices seen when none matches; Unavailable when libOpenCL.so.1 cannot be loaded.
absl::StatusOr<std::unique_ptr<Compiler>> CreateOpenCLCompiler(const ir::Target& target);

}  // namespace cinn_like::backends
