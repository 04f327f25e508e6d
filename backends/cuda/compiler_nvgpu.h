/// \file The NVGPU backend: CUDA C through NVRTC for the device, LLVM host code in ORC.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "backends/compiler.h"

namespace cinn_like::backends {

/// Chooses the CUDA arch (the flag cinn_like_cuda_arch, else the target's, else the device's)
/// and checks that this NVRTC supports it; the error names the arch, where it came from and
/// the NVRTC version. Needs no GPU when the arch is given.
absl::StatusOr<std::unique_ptr<Compiler>> CreateNVGPUCompiler(const ir::Target& target);

}  // namespace cinn_like::backends
