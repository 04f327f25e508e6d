/// \file CodeGenLLVM: math functions open-coded on vectors, for the x86 loops the schedules
/// vectorize (LLVM lowers llvm.exp of a vector to one libm call per lane).
///
/// exp, float32: Cody-Waite range reduction x = n ln2 + r, |r| <= ln2 / 2 (n = rint(x / ln2)),
/// with ln2 split in two so that n ln2 is exact; e^r by the degree-7 polynomial of Cephes'
/// expf (within about one unit in the last place on that range); 2^n applied as two exact
/// powers of two so that results down to the smallest denormal are reached. Horner steps are
/// llvm.fmuladd. Past the range: +inf above ln(FLT_MAX), +0 below the smallest denormal's log,
/// NaN for NaN.
///
/// tanh, float32: for |x| >= 0.5, sign(x) (1 - 2 / (e^(2|x|) + 1)) with the exp above (no
/// cancellation there: the result is at least 0.46); below, the odd Taylor polynomial to
/// x^15 (its first omitted term is under 1e-8 of the result); NaN for NaN, +-1 at +-inf.
#include <cmath>

#include "backends/llvm/codegen_llvm.h"

namespace cinn_like::backends {
namespace {

/// a * m + c as llvm.fmuladd: one FMA where the CPU has them (never less accurate).
llvm::Value* MulAdd(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* m, llvm::Value* c) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, m, c});
}

}  // namespace

llvm::Value* CodeGenLLVM::EmitVectorExpF32(llvm::Value* x) {
  auto& b = *builder_;
  llvm::Type* fty = x->getType();
  const unsigned lanes = llvm::cast<llvm::FixedVectorType>(fty)->getNumElements();
  llvm::Type* ity = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
  auto f = [&](double v) { return llvm::ConstantFP::get(fty, v); };
  auto i = [&](int v) { return llvm::ConstantInt::get(ity, v); };
  constexpr double kMax = 88.72283935546875;  // largest x with a finite float e^x
  constexpr double kMin = -103.972084045410;  // below: e^x rounds to +0
  llvm::Value* xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, f(kMin));
  xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, xc, f(kMax));
  // n = rint(x / ln2); r = x - n ln2, with ln2 = 0.693359375 - 2.12194440e-4 (the first part
  // has few bits, so n times it is exact).
  llvm::Value* n =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(xc, f(1.44269504088896341)));
  llvm::Value* r = b.CreateFSub(xc, b.CreateFMul(n, f(0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(n, f(-2.12194440e-4)));
  llvm::Value* p = f(1.9875691500e-4);
  for (double c :
       {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}) {
    p = MulAdd(b, p, r, f(c));
  }
  p = b.CreateFAdd(MulAdd(b, p, b.CreateFMul(r, r), r), f(1.0));
  // 2^n as 2^(n >> 1) * 2^(n - (n >> 1)): both factors are normal floats for n in [-150, 128].
  llvm::Value* ni = b.CreateFPToSI(n, ity);
  llvm::Value* n1 = b.CreateAShr(ni, i(1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* k) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, i(127)), i(23)), fty);
  };
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, pow2(n1)), pow2(n2));
  y = b.CreateSelect(b.CreateFCmpOGT(x, f(kMax)), f(HUGE_VAL), y);
  y = b.CreateSelect(b.CreateFCmpOLT(x, f(kMin)), f(0.0), y);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

llvm::Value* CodeGenLLVM::EmitVectorTanhF32(llvm::Value* x) {
  auto& b = *builder_;
  llvm::Type* fty = x->getType();
  auto f = [&](double v) { return llvm::ConstantFP::get(fty, v); };
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // Large: 1 - 2 / (e^(2|x|) + 1), which is 1 once e^(2|x|) overflows to inf.
  llvm::Value* e = EmitVectorExpF32(b.CreateFMul(ax, f(2.0)));
  llvm::Value* large = b.CreateFSub(f(1.0), b.CreateFDiv(f(2.0), b.CreateFAdd(e, f(1.0))));
  large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  // Small: x + x^3 (-1/3 + x^2 (2/15 + x^2 (-17/315 + ... - x^2 929569/638512875))).
  llvm::Value* x2 = b.CreateFMul(x, x);
  llvm::Value* p = f(-929569.0 / 638512875.0);
  for (double c : {21844.0 / 6081075.0, -1382.0 / 155925.0, 62.0 / 2835.0, -17.0 / 315.0,
                   2.0 / 15.0, -1.0 / 3.0}) {
    p = MulAdd(b, p, x2, f(c));
  }
  llvm::Value* small = MulAdd(b, b.CreateFMul(x, x2), p, x);
  llvm::Value* y = b.CreateSelect(b.CreateFCmpOLT(ax, f(0.5)), small, large);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

}  // namespace cinn_like::backends
