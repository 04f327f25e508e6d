/// \file Host code generation for OpenCL: the host entries check host (CPU) tensors, allocate
/// workspaces in host memory and launch kernels through cinn_like_opencl_launch.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/module.h"

namespace cinn_like::backends {

class CodeGenOpenCLHost : public CodeGenLLVM {
 public:
  /// LLVM IR for the host entries of a split OpenCL module. Each launch reads the kernel handle
  /// from the external global `@<kernel>_ptr_` (a slot holding a runtime::opencl::Kernel*, which
  /// the OpenCL compiler registers) and passes each argument with its size: a buffer's bytes
  /// from its shape, so that the runtime can wrap its host memory in a cl_mem.
  static absl::StatusOr<LLVMModule> Generate(const ir::Module& module);

 protected:
  CodeGenOpenCLHost(std::string triple, std::string data_layout);
  llvm::Value* EmitIntrinsicCall(const ir::Call* op) override;

 private:
  void EmitLaunchKernel(const ir::Call* op);

  /// Every buffer of the host entries (arguments and workspaces) by its data variable.
  std::unordered_map<const ir::Variable*, ir::Buffer> buffers_;
  /// Each kernel's argument kinds (input, output, scalar), by kernel name.
  std::map<std::string, std::vector<ir::Argument::Kind>> kinds_;
};

}  // namespace cinn_like::backends
