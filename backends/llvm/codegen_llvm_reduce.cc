/// \file CodeGenLLVM: horizontal reduces of a vector's lanes (the vector reduce intrinsics of
/// ir/intrinsics.h) as llvm.vector.reduce.*.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_llvm.h"

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
  const ir::IntrinsicOp kind = *op->intrinsic;
  bool sum = kind == ir::IntrinsicOp::kVectorReduceSum;
  bool max = kind == ir::IntrinsicOp::kVectorReduceMax;
  bool prod = kind == ir::IntrinsicOp::kVectorReduceProd;
  if (t.is_float()) {
    if (sum || prod) {
      // Lanes are partials of a reassociated reduction already: the order is free. The start
      // values are the identities (-0.0 keeps a sum of -0.0 lanes -0.0).
      auto* call = llvm::cast<llvm::CallInst>(
          sum ? b.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(ty), v)
              : b.CreateFMulReduce(llvm::ConstantFP::get(ty, 1.0), v));
      llvm::FastMathFlags flags;
      flags.setAllowReassoc();
      call->setFastMathFlags(flags);
      return call;
    }
    // NaN-propagating, as the reductions' combine (llvm.maximum, llvm.minimum) is.
    return max ? b.CreateFPMaximumReduce(v) : b.CreateFPMinimumReduce(v);
  }
  if (sum) return b.CreateAddReduce(v);
  if (prod) return b.CreateMulReduce(v);
  bool is_signed = t.is_int();
  return max ? b.CreateIntMaxReduce(v, is_signed) : b.CreateIntMinReduce(v, is_signed);
}

}  // namespace cinn_like::backends
