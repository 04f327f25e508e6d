/// \file The NVGPU backend: a split module to CUDA C, NVRTC, a CUDA module and host LLVM IR.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "ir/target.h"

namespace cinn_like::backends {

/// A compiler for an NVIDIA GPU. The arch is target.cuda_arch when set, else the flag
/// cinn_like_cuda_arch ("sm_90" or "90"), else device 0's; InvalidArgument when none can be
/// had or NVRTC does not support it (the message names the arch and where it came from).
absl::StatusOr<std::unique_ptr<Compiler>> CreateNVGPUCompiler(const ir::Target& target);

/// A compiler that only Loads code built for `target`, whose arch must be set: NVRTC is not
/// asked (a process that loads saved modules never initialises it).
absl::StatusOr<std::unique_ptr<Compiler>> CreateNVGPULoader(const ir::Target& target);

}  // namespace cinn_like::backends
