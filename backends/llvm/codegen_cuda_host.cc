/// \file NVGPU host code generation: kernel launches as calls to cinn_like_cuda_launch, behind a
/// test of the pointers a kernel assumes aligned (cinn_like_cuda_launch_realigned where it fails).
#include "backends/llvm/codegen_cuda_host.h"

#include <dlpack/dlpack.h>
#include <llvm/IR/MDBuilder.h>
#include <cstddef>

#include "absl/strings/str_cat.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "backends/cuda/kernel_alignment.h"
#endif
#include "backends/llvm/execution_engine.h"
#include "ir/visitor.h"
#include "runtime/cuda/cuda_runtime.h"

namespace cinn_like::backends {

CodeGenCudaHost::CodeGenCudaHost(std::string triple, std::string data_layout)
    : CodeGenLLVM(std::move(triple), std::move(data_layout)) {}

int32_t CodeGenCudaHost::DeviceType() const { return kDLCUDA; }

absl::StatusOr<LLVMModule> CodeGenCudaHost::Generate(const ir::Module& module) {
  auto host = HostTargetDescription();
  if (!host.ok()) return host.status();
  CodeGenCudaHost codegen(host->first, host->second);
  codegen.buffers_ = HostBuffers(module);
  for (const ir::LoweredFunc& f : module.functions) {
#ifdef CINN_LIKE_WITH_CUDA
    // The plan is the CUDA printer's (backends/cuda/, built only with CUDA); without it no
    // kernel is printed, so no launch needs the guard.
    for (const ir::LoweredFunc& kernel : f->kernels) {
      const KernelAlignment plan = PlanKernelAlignment(*kernel);
      if (!plan.HostRealigns()) continue;
      std::vector<AlignedArg>& args = codegen.realigned_[kernel->name];
      for (const KernelAlignment::Pointer& p : plan.pointers) {
        args.push_back({p.arg, p.bytes, kernel->args[p.arg].kind == ir::Argument::Kind::kOutput});
      }
    }
#endif
  }
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
  KernelLaunch launch;
  if (!EmitKernelLaunchHead(op, &launch)) return;
  const std::string& name = launch.name;
  const std::vector<llvm::Value*>& dims = launch.dims;
  llvm::Value* handle = launch.handle;

  // One stack slot per kernel argument, and an array of their addresses.
  size_t num_args = op->args.size() - kLaunchFixedArgs;
  llvm::Value* arg_array = EntryAlloca(
      ptr(), b.getInt32(static_cast<int>(std::max<size_t>(num_args, 1))), name + ".args");
  std::vector<llvm::Value*> values;
  std::vector<ir::Expr> exprs(op->args.begin() + kLaunchFixedArgs, op->args.end());
  for (size_t k = 0; k < num_args; ++k) {
    llvm::Value* v = EmitExpr(exprs[k]);
    values.push_back(v);
    llvm::AllocaInst* value_slot =
        EntryAlloca(v->getType(), nullptr, absl::StrCat(name, ".arg", k));
    b.CreateStore(v, value_slot);
    b.CreateStore(value_slot,
                  b.CreateInBoundsGEP(ptr(), arg_array, b.getInt32(static_cast<int>(k))));
  }
  std::vector<llvm::Value*> launch_args{
      handle,  ConstString(name), dims[0],   dims[1],
      dims[2], dims[3],           dims[4],   dims[5],
      dims[6], stream(),          arg_array, b.getInt32(static_cast<int>(num_args))};
  auto realigned = realigned_.find(name);
  llvm::Value* rc = realigned == realigned_.end()
                        ? b.CreateCall(LaunchFunction(), launch_args)
                        : EmitGuardedLaunch(name, realigned->second, values, exprs, launch_args);
  if (function()->getReturnType()->isIntegerTy(32)) ReturnIfNonzero(rc);
}

llvm::FunctionCallee CodeGenCudaHost::LaunchFunction() {
  return RuntimeFunction(
      "cinn_like_cuda_launch", i32(),
      {ptr(), ptr(), i32(), i32(), i32(), i32(), i32(), i32(), i32(), ptr(), ptr(), i32()});
}

llvm::Value* CodeGenCudaHost::EmitGuardedLaunch(const std::string& name,
                                                const std::vector<AlignedArg>& aligned,
                                                const std::vector<llvm::Value*>& values,
                                                const std::vector<ir::Expr>& exprs,
                                                const std::vector<llvm::Value*>& launch_args) {
  auto& b = builder();
  // Each aligned argument's buffer, for its size: the launch passes its data variable.
  std::vector<ir::Buffer> buffers;
  for (const AlignedArg& a : aligned) {
    const auto* var =
        static_cast<size_t>(a.arg) < exprs.size() ? exprs[a.arg].As<ir::Variable>() : nullptr;
    auto found = var ? buffers_.find(var) : buffers_.end();
    if (found == buffers_.end() || !values[a.arg]->getType()->isPointerTy()) {
      return Fail(absl::InternalError(absl::StrCat("launch of ", name, ": argument ", a.arg,
                                                   ", which the kernel assumes aligned, is not "
                                                   "a buffer of the entry")),
                  i32());
    }
    buffers.push_back(found->second);
  }
  // (a | b | ...) & (alignment - 1), per argument's alignment: nonzero when any is misaligned.
  llvm::Value* low_bits = b.getInt64(0);
  for (const AlignedArg& a : aligned) {
    llvm::Value* address = b.CreatePtrToInt(values[a.arg], i64());
    low_bits = b.CreateOr(low_bits, b.CreateAnd(address, b.getInt64(a.alignment - 1)));
  }
  llvm::Value* misaligned = b.CreateICmpNE(low_bits, b.getInt64(0), name + ".misaligned");
  llvm::BasicBlock* fast = llvm::BasicBlock::Create(ctx(), name + ".aligned", function());
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(ctx(), name + ".realign", function());
  llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx(), name + ".launched", function());
  b.CreateCondBr(misaligned, slow, fast, llvm::MDBuilder(ctx()).createUnlikelyBranchWeights());

  b.SetInsertPoint(fast);
  llvm::Value* fast_rc = b.CreateCall(LaunchFunction(), launch_args);
  b.CreateBr(join);

  // cinn_like_aligned_arg {i32 index, i32 alignment, i32 written, i64 bytes} per argument.
  static_assert(sizeof(cinn_like_aligned_arg) == 24 && offsetof(cinn_like_aligned_arg, bytes) == 16,
                "the table's LLVM type below is cinn_like_aligned_arg's layout");
  b.SetInsertPoint(slow);
  llvm::StructType* entry_type = llvm::StructType::get(ctx(), {i32(), i32(), i32(), i64()});
  llvm::Value* table =
      EntryAlloca(entry_type, b.getInt32(static_cast<int>(aligned.size())), name + ".aligned_args");
  for (size_t k = 0; k < aligned.size(); ++k) {
    llvm::Value* bytes = EmitBufferBytes(buffers[k]);
    const int32_t fields[] = {aligned[k].arg, aligned[k].alignment, aligned[k].written ? 1 : 0};
    static const char* const kFieldNames[] = {"index", "alignment", "written", "bytes"};
    for (int f = 0; f < 4; ++f) {
      llvm::Value* at =
          b.CreateInBoundsGEP(entry_type, table, {b.getInt32(static_cast<int>(k)), b.getInt32(f)},
                              absl::StrCat(name, ".aligned", k, ".", kFieldNames[f]));
      b.CreateStore(f < 3 ? b.getInt32(fields[f]) : bytes, at);
    }
  }
  std::vector<llvm::Type*> params = LaunchFunction().getFunctionType()->params();
  params.push_back(ptr());
  params.push_back(i32());
  auto realigned = RuntimeFunction("cinn_like_cuda_launch_realigned", i32(), params);
  std::vector<llvm::Value*> args = launch_args;
  args.push_back(table);
  args.push_back(b.getInt32(static_cast<int>(aligned.size())));
  llvm::Value* slow_rc = b.CreateCall(realigned, args);
  llvm::BasicBlock* slow_end = b.GetInsertBlock();
  b.CreateBr(join);

  b.SetInsertPoint(join);
  llvm::PHINode* rc = b.CreatePHI(i32(), 2, name + ".rc");
  rc->addIncoming(fast_rc, fast);
  rc->addIncoming(slow_rc, slow_end);
  return rc;
}

}  // namespace cinn_like::backends
