/// \file Host code generation for NVGPU: the host entries check CUDA tensors and launch
/// kernels through the runtime (intrinsic launch_kernel).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/module.h"

namespace cinn_like::backends {

class CodeGenCudaHost : public CodeGenLLVM {
 public:
  /// LLVM IR for the host entries of a split NVGPU module. Each launch reads the kernel
  /// handle from the external global `@<kernel>_ptr_` (the address of a void* slot that the
  /// NVGPU compiler registers) and calls cinn_like_cuda_launch on the entry's stream. A kernel
  /// whose vectors assume aligned pointers the host is to guarantee (KernelAlignment's
  /// HostRealigns) is launched behind a test of those pointers; when it fails, the launch goes
  /// to cinn_like_cuda_launch_realigned, which runs the kernel on aligned copies.
  static absl::StatusOr<LLVMModule> Generate(const ir::Module& module);

 protected:
  CodeGenCudaHost(std::string triple, std::string data_layout);
  int32_t DeviceType() const override;
  bool ReleasesInputs() const override { return true; }
  llvm::Value* EmitIntrinsicCall(const ir::Call* op) override;

 private:
  struct AlignedArg {
    int arg;        // index among the kernel's arguments
    int alignment;  // bytes
    bool written;
  };
  void EmitLaunchKernel(const ir::Call* op);
  /// `i32 cinn_like_cuda_launch(...)`, declared once.
  llvm::FunctionCallee LaunchFunction();
  /// cinn_like_cuda_launch(launch_args...) when every pointer of `aligned` among `values` (the
  /// arguments' values, of the expressions `exprs`) is aligned, else
  /// cinn_like_cuda_launch_realigned with the same arguments and a table of `aligned` (each
  /// buffer's size from its shape); the code either returns.
  llvm::Value* EmitGuardedLaunch(const std::string& name, const std::vector<AlignedArg>& aligned,
                                 const std::vector<llvm::Value*>& values,
                                 const std::vector<ir::Expr>& exprs,
                                 const std::vector<llvm::Value*>& launch_args);

  /// The kernels the host realigns, with the arguments each assumes aligned.
  std::map<std::string, std::vector<AlignedArg>> realigned_;
  /// Every buffer of the host entries (arguments and workspaces) by its data variable: what a
  /// launch's pointer argument is the data of, for its size.
  std::unordered_map<const ir::Variable*, ir::Buffer> buffers_;
};

}  // namespace cinn_like::backends
