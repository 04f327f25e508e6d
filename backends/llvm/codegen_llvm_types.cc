/// \file CodeGenLLVM: casts between the scalar types, and float16/bfloat16 promotion.
///
/// float16 is LLVM `half`, bfloat16 is `bfloat`, both 16 bits in memory; bool is i1 in
/// registers and i8 in memory. x86 has no arithmetic on either 16-bit type, so every
/// operation widens its operands exactly to float32, computes, and rounds the result back to
/// nearest even (the CUDA backend does the same). half <-> float use fpext/fptrunc (F16C when
/// the host has it); bfloat16 is open-coded on the bits, so no libcall is needed.
#include <llvm/IR/Intrinsics.h>

#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_llvm.h"

namespace cinn_like::backends {
namespace {

/// `t`'s shape (scalar or vector of the same lanes) with element type `elem`.
llvm::Type* SameShape(llvm::Type* like, llvm::Type* elem) {
  if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(like)) {
    return llvm::FixedVectorType::get(elem, v->getNumElements());
  }
  return elem;
}

llvm::Constant* Splat(llvm::Type* like, llvm::Constant* c) {
  if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(like)) {
    return llvm::ConstantVector::getSplat(v->getElementCount(), c);
  }
  return c;
}

}  // namespace

llvm::Value* CodeGenLLVM::WidenToFloat(llvm::Value* v, const ir::Type& t) {
  auto& b = *builder_;
  llvm::Type* f32 = SameShape(v->getType(), b.getFloatTy());
  if (t.is_float16()) return b.CreateFPExt(v, f32);
  // bfloat16 is the high half of a float32.
  llvm::Value* bits = b.CreateBitCast(v, SameShape(v->getType(), b.getInt16Ty()));
  bits = b.CreateShl(b.CreateZExt(bits, SameShape(v->getType(), b.getInt32Ty())), 16);
  return b.CreateBitCast(bits, f32);
}

llvm::Value* CodeGenLLVM::NarrowFromFloat(llvm::Value* f, const ir::Type& t) {
  auto& b = *builder_;
  if (t.is_float16()) return b.CreateFPTrunc(f, SameShape(f->getType(), b.getHalfTy()));
  // bfloat16: add 0x7fff plus the lowest kept bit, keep the high half (ties to even); NaN
  // keeps its high half with the quiet bit set.
  llvm::Type* i32 = SameShape(f->getType(), b.getInt32Ty());
  llvm::Value* x = b.CreateBitCast(f, i32);
  llvm::Value* high = b.CreateLShr(x, Splat(i32, b.getInt32(16)));
  llvm::Value* lsb = b.CreateAnd(high, Splat(i32, b.getInt32(1)));
  llvm::Value* rounded = b.CreateLShr(
      b.CreateAdd(b.CreateAdd(x, Splat(i32, b.getInt32(0x7fff))), lsb), Splat(i32, b.getInt32(16)));
  llvm::Value* nan = b.CreateOr(high, Splat(i32, b.getInt32(0x40)));
  llvm::Value* r = b.CreateSelect(b.CreateFCmpUNO(f, f), nan, rounded);
  r = b.CreateTrunc(r, SameShape(f->getType(), b.getInt16Ty()));
  return b.CreateBitCast(r, SameShape(f->getType(), b.getBFloatTy()));
}

llvm::Value* CodeGenLLVM::DoubleToFloatRoundToOdd(llvm::Value* d) {
  auto& b = *builder_;
  llvm::Type* f32 = SameShape(d->getType(), b.getFloatTy());
  llvm::Type* i32 = SameShape(d->getType(), b.getInt32Ty());
  llvm::Value* f = b.CreateFPTrunc(d, f32);
  llvm::Value* back = b.CreateFPExt(f, d->getType());
  llvm::Value* inexact = b.CreateFCmpONE(back, d);
  llvm::Value* away = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                      b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
  llvm::Value* bits = b.CreateBitCast(f, i32);
  // Rounded away from zero: one step back toward zero; then force the last bit when inexact.
  llvm::Value* toward = b.CreateSub(bits, b.CreateZExt(away, i32));
  llvm::Value* odd = b.CreateOr(toward, Splat(i32, b.getInt32(1)));
  return b.CreateBitCast(b.CreateSelect(inexact, odd, bits), f32);
}

llvm::Value* CodeGenLLVM::EmitCast(const ir::Cast* op) {
  return CastValue(EmitExpr(op->value), op->value.type(), op->type);
}

// Float to int truncates toward zero (fptosi/fptoui; out of range is undefined, as in C);
// int to a narrower int wraps; to float16/bfloat16 rounds once to nearest even from any
// source (float64 and integers go through a round-to-odd float32; int64 beyond 2^53 is first
// rounded to float64).
llvm::Value* CodeGenLLVM::CastValue(llvm::Value* v, const ir::Type& from, const ir::Type& to) {
  auto& b = *builder_;
  llvm::Type* dst = LLVMType(to);
  if (from.is_handle() || to.is_handle() || from.is_string() || to.is_string() || from.is_void() ||
      to.is_void()) {
    return Fail(absl::InvalidArgumentError(
                    absl::StrCat("cannot cast ", from.ToString(), " to ", to.ToString())),
                dst);
  }
  if (from == to) return v;
  if (from.is_low_precision_float()) {
    ir::Type f32 = ir::Float(32, from.lanes());
    llvm::Value* f = WidenToFloat(v, from);
    return to == f32 ? f : CastValue(f, f32, to);
  }
  if (to.is_low_precision_float()) {
    ir::Type f32 = ir::Float(32, to.lanes());
    if (from == f32) return NarrowFromFloat(v, to);
    if (from.is_bool()) return NarrowFromFloat(b.CreateUIToFP(v, LLVMType(f32)), to);
    ir::Type f64 = ir::Float(64, to.lanes());
    llvm::Value* d = from.is_float() ? v : CastValue(v, from, f64);
    return NarrowFromFloat(DoubleToFloatRoundToOdd(d), to);
  }
  if (to.is_bool()) {
    if (from.is_float()) return b.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (from.is_bool()) return to.is_float() ? b.CreateUIToFP(v, dst) : b.CreateZExt(v, dst);
  if (from.is_float() && to.is_float()) return b.CreateFPCast(v, dst);
  if (from.is_float()) return to.is_int() ? b.CreateFPToSI(v, dst) : b.CreateFPToUI(v, dst);
  if (to.is_float()) return from.is_int() ? b.CreateSIToFP(v, dst) : b.CreateUIToFP(v, dst);
  return b.CreateIntCast(v, dst, from.is_int());
}

}  // namespace cinn_like::backends
