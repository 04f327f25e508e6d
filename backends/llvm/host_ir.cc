/// \file LLVM IR text of the host code generators.
#include "backends/llvm/host_ir.h"

#include "backends/llvm/codegen_cuda_host.h"
#include "backends/llvm/codegen_x86.h"
#include "backends/llvm/execution_engine.h"

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

absl::StatusOr<int> LinkCudaHostGlue(const ir::Module& module,
                                     const std::vector<std::string>& kernels) {
  auto engine = ExecutionEngine::Create(ExecutionEngine::HostCode::kGlue);
  if (!engine.ok()) return engine.status();
  std::vector<void*> slots(kernels.size(), nullptr);
  std::vector<std::pair<std::string, void*>> symbols;
  for (size_t k = 0; k < kernels.size(); ++k) symbols.emplace_back(kernels[k] + "_ptr_", &slots[k]);
  absl::Status registered = (*engine)->RegisterSymbols(symbols);
  if (!registered.ok()) return registered;
  auto host = CodeGenCudaHost::Generate(module);
  if (!host.ok()) return host.status();
  absl::Status optimized = (*engine)->Optimize(*host);
  if (!optimized.ok()) return optimized;
  absl::Status added = (*engine)->AddModule(std::move(*host));
  if (!added.ok()) return added;
  auto entry = (*engine)->LookupEntry(module.name);
  if (!entry.ok()) return entry.status();
  return static_cast<int>((*engine)->objects().size());
}

}  // namespace cinn_like::backends
