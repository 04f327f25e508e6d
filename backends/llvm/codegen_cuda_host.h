/// \file Host code generation for NVGPU: the host entries check CUDA tensors and launch
/// kernels through the runtime (intrinsic launch_kernel).
#pragma once

#include "absl/status/statusor.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/module.h"

namespace cinn_like::backends {

class CodeGenCudaHost : public CodeGenLLVM {
 public:
  /// LLVM IR for the host entries of a split NVGPU module. Each launch reads the kernel
  /// handle from the external global `@<kernel>_ptr_` (the address of a void* slot that the
  /// NVGPU compiler registers) and calls cinn_like_cuda_launch on the entry's stream.
  static absl::StatusOr<LLVMModule> Generate(const ir::Module& module);

 protected:
  CodeGenCudaHost(std::string triple, std::string data_layout);
  int32_t DeviceType() const override;
  llvm::Value* EmitIntrinsicCall(const ir::Call* op) override;

 private:
  void EmitLaunchKernel(const ir::Call* op);
};

}  // namespace cinn_like::backends
