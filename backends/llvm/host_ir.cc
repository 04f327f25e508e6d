/// \file LLVM IR text of the host code generators.
#include "backends/llvm/host_ir.h"

#include "backends/llvm/codegen_cuda_host.h"
#include "backends/llvm/codegen_x86.h"

namespace cinn_like::backends {

absl::StatusOr<std::string> X86HostIR(const ir::Module& module) {
  auto m = CodeGenX86::Generate(module);
  if (!m.ok()) return m.status();
  return m->ToString();
}

absl::StatusOr<std::string> CudaHostIR(const ir::Module& module) {
  auto m = CodeGenCudaHost::Generate(module);
  if (!m.ok()) return m.status();
  return m->ToString();
}

}  // namespace cinn_like::backends
