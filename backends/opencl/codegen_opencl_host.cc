/// \file OpenCL host code generation: kernel launches as calls to cinn_like_opencl_launch with a
/// table of the arguments, their sizes and kinds.
#include "backends/opencl/codegen_opencl_host.h"

#include <cstddef>

#include "absl/strings/str_cat.h"
#include "backends/llvm/execution_engine.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "runtime/opencl/opencl_runtime.h"

namespace cinn_like::backends {

CodeGenOpenCLHost::CodeGenOpenCLHost(std::string triple, std::string data_layout)
    : CodeGenLLVM(std::move(triple), std::move(data_layout)) {}

absl::StatusOr<LLVMModule> CodeGenOpenCLHost::Generate(const ir::Module& module) {
  auto host = HostTargetDescription();
  if (!host.ok()) return host.status();
  CodeGenOpenCLHost codegen(host->first, host->second);
  codegen.buffers_ = HostBuffers(module);
  for (const ir::LoweredFunc& f : module.functions) {
    for (const ir::LoweredFunc& kernel : f->kernels) {
      std::vector<ir::Argument::Kind>& kinds = codegen.kinds_[kernel->name];
      kinds.clear();
      for (const ir::Argument& a : kernel->args) kinds.push_back(a.kind);
    }
  }
  return codegen.Compile(module);
}

llvm::Value* CodeGenOpenCLHost::EmitIntrinsicCall(const ir::Call* op) {
  if (op->is_intrinsic(ir::IntrinsicOp::kLaunchKernel)) {
    EmitLaunchKernel(op);
    return llvm::PoisonValue::get(op->type.is_void() ? i32() : LLVMType(op->type));
  }
  return CodeGenLLVM::EmitIntrinsicCall(op);
}

void CodeGenOpenCLHost::EmitLaunchKernel(const ir::Call* op) {
  auto& b = builder();
  KernelLaunch launch;
  if (!EmitKernelLaunchHead(op, &launch)) return;
  const std::string& name = launch.name;
  const std::vector<llvm::Value*>& dims = launch.dims;
  auto kinds = kinds_.find(name);
  if (kinds == kinds_.end()) {
    Fail(absl::UnimplementedError(
        absl::StrCat("launch of ", name,
                     ": not a kernel the module generates (library kernels are CUDA only)")));
    return;
  }
  if (const int64_t* shared = ir::AsConstInt(op->args[7]); !shared || *shared != 0) {
    Fail(absl::UnimplementedError(
        absl::StrCat("launch of ", name, ": dynamic shared memory (", ir::ToString(op->args[7]),
                     " bytes) is not supported on OpenCL; local arrays must have constant sizes")));
    return;
  }

  // cinn_like_opencl_arg {ptr value, i64 bytes, i32 kind, i32 reserved} per argument; value
  // points at a stack slot holding the argument.
  static_assert(sizeof(cinn_like_opencl_arg) == 24 && offsetof(cinn_like_opencl_arg, kind) == 16,
                "the table's LLVM type below is cinn_like_opencl_arg's layout");
  const size_t num_args = op->args.size() - kLaunchFixedArgs;
  if (num_args != kinds->second.size()) {
    Fail(absl::InternalError(absl::StrCat("launch of ", name, " passes ", num_args,
                                          " arguments; the kernel takes ", kinds->second.size())));
    return;
  }
  llvm::StructType* entry_type = llvm::StructType::get(ctx(), {ptr(), i64(), i32(), i32()});
  llvm::Value* table = EntryAlloca(
      entry_type, b.getInt32(static_cast<int>(std::max<size_t>(num_args, 1))), name + ".args");
  for (size_t k = 0; k < num_args; ++k) {
    const ir::Expr& e = op->args[kLaunchFixedArgs + k];
    llvm::Value* v = EmitExpr(e);
    llvm::AllocaInst* value_slot =
        EntryAlloca(v->getType(), nullptr, absl::StrCat(name, ".arg", k));
    b.CreateStore(v, value_slot);
    llvm::Value* bytes = nullptr;
    int32_t kind = CINN_LIKE_OPENCL_SCALAR;
    if (v->getType()->isPointerTy()) {
      const auto* var = e.As<ir::Variable>();
      auto found = var ? buffers_.find(var) : buffers_.end();
      if (found == buffers_.end()) {
        Fail(absl::InternalError(absl::StrCat("launch of ", name, ": argument ", k,
                                              " is a pointer but not a buffer of the entry")));
        return;
      }
      bytes = EmitBufferBytes(found->second);
      kind = kinds->second[k] == ir::Argument::Kind::kInput ? CINN_LIKE_OPENCL_INPUT
                                                            : CINN_LIKE_OPENCL_OUTPUT;
    } else {
      bytes =
          b.getInt64(static_cast<int64_t>(module().getDataLayout().getTypeAllocSize(v->getType())));
    }
    const int index = static_cast<int>(k);
    b.CreateStore(value_slot,
                  b.CreateInBoundsGEP(entry_type, table, {b.getInt32(index), b.getInt32(0)}));
    b.CreateStore(bytes,
                  b.CreateInBoundsGEP(entry_type, table, {b.getInt32(index), b.getInt32(1)}));
    b.CreateStore(b.getInt32(kind),
                  b.CreateInBoundsGEP(entry_type, table, {b.getInt32(index), b.getInt32(2)}));
  }
  auto launch_fn =
      RuntimeFunction("cinn_like_opencl_launch", i32(),
                      {ptr(), i32(), i32(), i32(), i32(), i32(), i32(), ptr(), ptr(), i32()});
  llvm::Value* rc =
      b.CreateCall(launch_fn, {launch.handle, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
                               stream(), table, b.getInt32(static_cast<int>(num_args))});
  if (function()->getReturnType()->isIntegerTy(32)) ReturnIfNonzero(rc);
}

}  // namespace cinn_like::backends
