/// \file The LLVM IR text of host code generation, for tools and tests that do not see LLVM
/// headers (libcinn_like keeps LLVM private).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace cinn_like::backends {

/// Unoptimized LLVM IR of CodeGenX86::Generate(module).
absl::StatusOr<std::string> X86HostIR(const ir::Module& module);
/// Unoptimized LLVM IR of CodeGenCudaHost::Generate(module).
absl::StatusOr<std::string> CudaHostIR(const ir::Module& module);

}  // namespace cinn_like::backends
