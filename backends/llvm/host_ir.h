/// \file The LLVM IR text of host code generation, for tools and tests that do not see LLVM
/// headers (libcinn_like keeps LLVM private).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace cinn_like::backends {

/// Unoptimized LLVM IR of CodeGenX86::Generate(module).
absl::StatusOr<std::string> X86HostIR(const ir::Module& module);
/// Unoptimized LLVM IR of CodeGenCudaHost::Generate(module).
absl::StatusOr<std::string> CudaHostIR(const ir::Module& module);
/// The NVGPU host entries of `module` optimised, compiled and linked as CompilerNVGPU::Build
/// does (glue: ExecutionEngine::HostCode::kGlue), against stand-in handle slots of `kernels`:
/// the host half of a build, without a GPU. The number of objects made, or the first error.
absl::StatusOr<int> LinkCudaHostGlue(const ir::Module& module,
                                     const std::vector<std::string>& kernels);

}  // namespace cinn_like::backends
