/// \file The philox_uniform intrinsic in LLVM IR: Philox4x32-10 (ir/philox.h) written out in
/// integer instructions, on scalars or lane by lane on vectors (every instruction used is
/// elementwise on vector operands, and constants splat), so loops around it vectorize.
#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/philox.h"

namespace cinn_like::backends {

llvm::Value* CodeGenLLVM::EmitPhiloxUniform(const ir::Call* op) {
  auto& b = builder();
  if (op->args.size() != 3) {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat("philox_uniform takes (seed, stream, index), got ",
                                                op->args.size(), " arguments")),
        LLVMType(op->type));
  }
  const int lanes = op->type.lanes();
  auto vec = [&](llvm::Type* t) -> llvm::Type* {
    return lanes > 1 ? llvm::FixedVectorType::get(t, lanes) : t;
  };
  llvm::Type* u32 = vec(b.getInt32Ty());
  llvm::Type* u64 = vec(b.getInt64Ty());
  // Each argument as i64 (or a vector of them): a scalar beside vector lanes is splat.
  auto arg = [&](int k) {
    llvm::Value* v = EmitExpr(op->args[k]);
    v = b.CreateIntCast(v, op->args[k].type().is_vector() ? u64 : b.getInt64Ty(),
                        op->args[k].type().is_int());
    if (lanes > 1 && !v->getType()->isVectorTy()) v = b.CreateVectorSplat(lanes, v);
    return v;
  };
  llvm::Value *seed = arg(0), *stream = arg(1), *index = arg(2);
  auto c64 = [&](uint64_t x) { return llvm::ConstantInt::get(u64, x); };
  auto c32 = [&](uint32_t x) { return llvm::ConstantInt::get(u32, x); };
  auto lo = [&](llvm::Value* x) { return b.CreateTrunc(x, u32); };
  auto hi = [&](llvm::Value* x) { return b.CreateTrunc(b.CreateLShr(x, c64(32)), u32); };
  llvm::Value *c0 = lo(index), *c1 = hi(index), *c2 = lo(stream), *c3 = hi(stream);
  llvm::Value *k0 = lo(seed), *k1 = hi(seed);
  for (int r = 0; r < ir::kPhiloxRounds; ++r) {
    llvm::Value* p0 = b.CreateMul(b.CreateZExt(c0, u64), c64(ir::kPhiloxM0));
    llvm::Value* p1 = b.CreateMul(b.CreateZExt(c2, u64), c64(ir::kPhiloxM1));
    llvm::Value* n0 = b.CreateXor(b.CreateXor(hi(p1), c1), k0);
    llvm::Value* n2 = b.CreateXor(b.CreateXor(hi(p0), c3), k1);
    c1 = lo(p1);
    c3 = lo(p0);
    c0 = n0;
    c2 = n2;
    k0 = b.CreateAdd(k0, c32(ir::kPhiloxW0));
    k1 = b.CreateAdd(k1, c32(ir::kPhiloxW1));
  }
  llvm::Value* top = b.CreateUIToFP(b.CreateLShr(c0, c32(8)), vec(b.getFloatTy()));
  return b.CreateFMul(top, llvm::ConstantFP::get(vec(b.getFloatTy()), 0x1p-24));
}

}  // namespace cinn_like::backends
