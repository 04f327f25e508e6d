/// \file x86 code generation: CodeGenLLVM with the host's target description.
#include "backends/llvm/codegen_x86.h"

#include <dlpack/dlpack.h>

#include "backends/llvm/execution_engine.h"

namespace cinn_like::backends {

CodeGenX86::CodeGenX86(std::string triple, std::string data_layout)
    : CodeGenLLVM(std::move(triple), std::move(data_layout)) {}

int32_t CodeGenX86::DeviceType() const { return kDLCPU; }

absl::StatusOr<LLVMModule> CodeGenX86::Generate(const ir::Module& module) {
  auto host = HostTargetDescription();
  if (!host.ok()) return host.status();
  CodeGenX86 codegen(host->first, host->second);
  return codegen.Compile(module);
}

}  // namespace cinn_like::backends
