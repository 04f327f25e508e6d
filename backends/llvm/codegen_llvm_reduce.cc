/// \file CodeGenLLVM: horizontal reduces of a vector's lanes (the intrinsics of
/// ir/transforms/vectorize_reduce.h) as llvm.vector.reduce.*.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/transforms/vectorize_reduce.h"

namespace cinn_like::backends {

llvm::Value* CodeGenLLVM::EmitVectorReduce(const ir::Call* op) {
  auto& b = *builder_;
  llvm::Type* ty = LLVMType(op->type);
  if (op->args.size() != 1 || !op->args[0].type().is_vector() ||
      op->args[0].type().ElementOf() != op->type) {
    return Fail(
        absl::InternalError(absl::StrCat(op->name, " takes one vector of ", op->type.ToString())),
        ty);
  }
  llvm::Value* v = EmitExpr(op->args[0]);
  const ir::Type& t = op->type;
  bool sum = op->name == ir::kVectorReduceSum, max = op->name == ir::kVectorReduceMax;
  if (t.is_float()) {
    if (sum) {
      // Lanes are partial sums of a reassociated reduction already: the order is free.
      llvm::Value* start = llvm::ConstantFP::getNegativeZero(ty);
      auto* call = llvm::cast<llvm::CallInst>(b.CreateFAddReduce(start, v));
      llvm::FastMathFlags flags;
      flags.setAllowReassoc();
      call->setFastMathFlags(flags);
      return call;
    }
    return max ? b.CreateFPMaxReduce(v) : b.CreateFPMinReduce(v);
  }
  if (sum) return b.CreateAddReduce(v);
  bool is_signed = t.is_int();
  return max ? b.CreateIntMaxReduce(v, is_signed) : b.CreateIntMinReduce(v, is_signed);
}

}  // namespace cinn_like::backends
