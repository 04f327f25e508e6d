/// \file CodeGenLLVM: math calls, lowered as the table below says: an LLVM intrinsic (vectors
/// stay vectors), a libm symbol resolved in the ORC JIT (called lane by lane), or open code
/// (rsqrt is 1 / sqrt; exp and tanh of float32 vectors, codegen_llvm_vector_math.cc, which LLVM
/// would otherwise scalarize into libm calls). float16/bfloat16 calls compute in float32.
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/math.h"

namespace cinn_like::backends {
namespace {

struct MathLowering {
  ir::MathOp op;
  /// "llvm.<x>": an LLVM intrinsic overloaded on the type (vectors too); a bare name: a libm
  /// symbol (float32 appends "f"), called lane by lane; "": open-coded.
  const char* llvm;
};

/// How each math op lowers, in MathOp order.
constexpr MathLowering kMathLowerings[] = {
    {ir::MathOp::kExp, "llvm.exp"},
    {ir::MathOp::kExp2, "llvm.exp2"},
    {ir::MathOp::kExpm1, "expm1"},
    {ir::MathOp::kLog, "llvm.log"},
    {ir::MathOp::kLog2, "llvm.log2"},
    {ir::MathOp::kLog10, "llvm.log10"},
    {ir::MathOp::kLog1p, "log1p"},
    {ir::MathOp::kSqrt, "llvm.sqrt"},
    {ir::MathOp::kRsqrt, ""},  // 1 / sqrt
    {ir::MathOp::kCbrt, "cbrt"},
    {ir::MathOp::kSin, "llvm.sin"},
    {ir::MathOp::kCos, "llvm.cos"},
    {ir::MathOp::kTan, "tan"},
    {ir::MathOp::kAsin, "asin"},
    {ir::MathOp::kAcos, "acos"},
    {ir::MathOp::kAtan, "atan"},
    {ir::MathOp::kSinh, "sinh"},
    {ir::MathOp::kCosh, "cosh"},
    {ir::MathOp::kTanh, "tanh"},
    {ir::MathOp::kAsinh, "asinh"},
    {ir::MathOp::kAcosh, "acosh"},
    {ir::MathOp::kAtanh, "atanh"},
    {ir::MathOp::kErf, "erf"},
    {ir::MathOp::kErfc, "erfc"},
    {ir::MathOp::kLgamma, "lgamma"},
    {ir::MathOp::kTgamma, "tgamma"},
    {ir::MathOp::kAbs, "llvm.fabs"},
    {ir::MathOp::kFloor, "llvm.floor"},
    {ir::MathOp::kCeil, "llvm.ceil"},
    {ir::MathOp::kRound, "llvm.round"},
    {ir::MathOp::kTrunc, "llvm.trunc"},
    {ir::MathOp::kRint, "llvm.rint"},
    {ir::MathOp::kNearbyint, "llvm.nearbyint"},
    {ir::MathOp::kPow, "llvm.pow"},
    {ir::MathOp::kAtan2, "atan2"},
    {ir::MathOp::kFmod, "fmod"},
    {ir::MathOp::kHypot, "hypot"},
    {ir::MathOp::kCopysign, "llvm.copysign"},
    {ir::MathOp::kFmin, "llvm.minnum"},
    {ir::MathOp::kFmax, "llvm.maxnum"},
    {ir::MathOp::kFma, "llvm.fma"},
    {ir::MathOp::kFastExp, "llvm.exp"},  // exp's lowering (the vector form for float32 vectors)
    {ir::MathOp::kFastRecip, ""},        // 1 / x
    {ir::MathOp::kMaximum, "llvm.maximum"},
    {ir::MathOp::kMinimum, "llvm.minimum"},
};
static_assert(ir::CoversEveryMathOp(kMathLowerings), "one lowering per math op, in MathOp order");

}  // namespace

llvm::Value* CodeGenLLVM::EmitPureCall(const ir::Call* op) {
  auto& b = *builder_;
  llvm::Type* ty = LLVMType(op->type);
  auto math = ir::MathOpFromName(op->name);
  if (!math) return Fail(absl::UnimplementedError("unknown math function " + op->name), ty);
  const ir::MathOpInfo& info = ir::GetMathOpInfo(*math);
  if (!op->type.is_float()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
                    "math function ", info.name,
                    " takes a floating-point type (float16, bfloat16, float32, float64), got ",
                    op->type.ToString())),
                ty);
  }
  if (static_cast<int>(op->args.size()) != info.arity) {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat("math function ", info.name, " takes ", info.arity,
                                                " arguments, got ", op->args.size())),
        ty);
  }
  ir::Type ct = ir::MathComputeType(op->type);
  llvm::Type* cty = LLVMType(ct);
  std::vector<llvm::Value*> args;
  for (auto& a : op->args) {
    if (a.type() != op->type) {
      return Fail(absl::InvalidArgumentError(
                      absl::StrCat("math function ", info.name, " of type ", op->type.ToString(),
                                   " has an argument of type ", a.type().ToString())),
                  ty);
    }
    llvm::Value* v = EmitExpr(a);
    args.push_back(op->type.is_low_precision_float() ? WidenToFloat(v, op->type) : v);
  }
  const char* lowering = kMathLowerings[static_cast<int>(*math)].llvm;
  llvm::Value* result = nullptr;
  const bool exp = *math == ir::MathOp::kExp || *math == ir::MathOp::kFastExp;
  if (exp && ct.bits() == 32 && !ct.is_scalar()) {
    result = EmitVectorExpF32(args[0]);
  } else if (*math == ir::MathOp::kTanh && ct.bits() == 32 && !ct.is_scalar()) {
    result = EmitVectorTanhF32(args[0]);
  } else if (*math == ir::MathOp::kFastRecip) {
    result = b.CreateFDiv(llvm::ConstantFP::get(cty, 1.0), args[0]);
  } else if (*math == ir::MathOp::kRsqrt) {
    llvm::Value* root = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
    result = b.CreateFDiv(llvm::ConstantFP::get(cty, 1.0), root);
  } else if (absl::StartsWith(lowering, "llvm.")) {
    llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(lowering);
    llvm::Function* fn = llvm::Intrinsic::getDeclaration(module_.get(), id, {cty});
    result = b.CreateCall(fn, args);
  } else {
    llvm::Type* scalar = LLVMType(ct.ElementOf());
    std::string libm = ct.bits() == 32 ? absl::StrCat(lowering, "f") : lowering;
    std::vector<llvm::Type*> params(args.size(), scalar);
    auto callee = RuntimeFunction(libm, scalar, params);
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->setDoesNotThrow();
      f->setOnlyAccessesInaccessibleMemory();
      f->setWillReturn();
    }
    if (ct.is_scalar()) {
      result = b.CreateCall(callee, args);
    } else {
      result = llvm::PoisonValue::get(cty);
      for (int k = 0; k < ct.lanes(); ++k) {
        std::vector<llvm::Value*> lane_args;
        for (auto* a : args) lane_args.push_back(b.CreateExtractElement(a, b.getInt32(k)));
        result = b.CreateInsertElement(result, b.CreateCall(callee, lane_args), b.getInt32(k));
      }
    }
  }
  return op->type.is_low_precision_float() ? NarrowFromFloat(result, op->type) : result;
}

}  // namespace cinn_like::backends
