/// \file Host code generation for x86: the whole module is LLVM IR for the host CPU.
#pragma once

#include "absl/status/statusor.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/module.h"

namespace cinn_like::backends {

class CodeGenX86 : public CodeGenLLVM {
 public:
  /// LLVM IR (unoptimized) for the host entries of `module`, with the host's triple and data
  /// layout; tensors must be on the CPU.
  static absl::StatusOr<LLVMModule> Generate(const ir::Module& module);

 protected:
  CodeGenX86(std::string triple, std::string data_layout);
  int32_t DeviceType() const override;
  bool ReleasesInputs() const override { return true; }
};

}  // namespace cinn_like::backends
