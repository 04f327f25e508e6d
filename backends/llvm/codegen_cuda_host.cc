/// \file NVGPU host code generation: kernel launches as calls to cinn_like_cuda_launch.
#include "backends/llvm/codegen_cuda_host.h"

#include <dlpack/dlpack.h>

#include "absl/strings/str_cat.h"
#include "backends/llvm/execution_engine.h"

namespace cinn_like::backends {

CodeGenCudaHost::CodeGenCudaHost(std::string triple, std::string data_layout)
    : CodeGenLLVM(std::move(triple), std::move(data_layout)) {}

int32_t CodeGenCudaHost::DeviceType() const { return kDLCUDA; }

absl::StatusOr<LLVMModule> CodeGenCudaHost::Generate(const ir::Module& module) {
  auto host = HostTargetDescription();
  if (!host.ok()) return host.status();
  CodeGenCudaHost codegen(host->first, host->second);
  return codegen.Compile(module);
}

llvm::Value* CodeGenCudaHost::EmitIntrinsicCall(const ir::Call* op) {
  if (op->is_intrinsic(ir::IntrinsicOp::kLaunchKernel)) {
    EmitLaunchKernel(op);
    // The launch has no value; a placeholder keeps Evaluate's caller uniform.
    return llvm::PoisonValue::get(op->type.is_void() ? i32() : LLVMType(op->type));
  }
  return CodeGenLLVM::EmitIntrinsicCall(op);
}

void CodeGenCudaHost::EmitLaunchKernel(const ir::Call* op) {
  auto& b = builder();
  constexpr size_t kFixedArgs = 8;  // name, grid xyz, block xyz, shared-memory bytes
  auto* kernel = op->args.empty() ? nullptr : op->args[0].As<ir::StringImm>();
  if (op->args.size() < kFixedArgs || !kernel) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat(op->name, " needs a kernel name, grid x/y/z, block x/y/z and shared-memory ",
                     "bytes, got ", op->args.size(), " arguments")));
    return;
  }
  const std::string& name = kernel->value;
  std::vector<llvm::Value*> dims;
  for (size_t k = 1; k < kFixedArgs; ++k) {
    const ir::Expr& e = op->args[k];
    if (!e.type().is_integer() || e.type().is_vector()) {
      Fail(absl::InvalidArgumentError(absl::StrCat("launch of ", name, ": argument ", k,
                                                   " has type ", e.type().ToString(),
                                                   ", expected int32")));
      return;
    }
    dims.push_back(b.CreateIntCast(EmitExpr(e), i32(), e.type().is_int()));
  }
  // The kernel handle: @<kernel>_ptr_ is a void* slot holding the CUfunction.
  std::string symbol = name + "_ptr_";
  auto* slot = module().getNamedGlobal(symbol);
  if (!slot) {
    slot = new llvm::GlobalVariable(module(), ptr(), false, llvm::GlobalValue::ExternalLinkage,
                                    nullptr, symbol);
  }
  llvm::Value* handle = b.CreateLoad(ptr(), slot, name + ".handle");

  // One stack slot per kernel argument, and an array of their addresses.
  size_t num_args = op->args.size() - kFixedArgs;
  llvm::Value* arg_array = EntryAlloca(
      ptr(), b.getInt32(static_cast<int>(std::max<size_t>(num_args, 1))), name + ".args");
  for (size_t k = 0; k < num_args; ++k) {
    const ir::Expr& e = op->args[kFixedArgs + k];
    llvm::Value* v = EmitExpr(e);
    llvm::AllocaInst* value_slot =
        EntryAlloca(v->getType(), nullptr, absl::StrCat(name, ".arg", k));
    b.CreateStore(v, value_slot);
    b.CreateStore(value_slot,
                  b.CreateInBoundsGEP(ptr(), arg_array, b.getInt32(static_cast<int>(k))));
  }
  auto launch = RuntimeFunction(
      "cinn_like_cuda_launch", i32(),
      {ptr(), ptr(), i32(), i32(), i32(), i32(), i32(), i32(), i32(), ptr(), ptr(), i32()});
  llvm::Value* rc = b.CreateCall(
      launch, {handle, ConstString(name), dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
               dims[6], stream(), arg_array, b.getInt32(static_cast<int>(num_args))});
  if (function()->getReturnType()->isIntegerTy(32)) ReturnIfNonzero(rc);
}

}  // namespace cinn_like::backends
