/// \file IR types: bfloat16 distinct from float16, their names, constants rounded to their
/// type, constant folding that agrees with the device, the printer, and the math table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ir/float16.h"
#include "ir/math.h"
#include "ir/printer.h"
#include "ir/transforms/simplify.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

TEST(Types, Float16AndBFloat16AreDistinct) {
  EXPECT_NE(Float16(), BFloat16());
  EXPECT_EQ(Float16().ToString(), "float16");
  EXPECT_EQ(BFloat16().ToString(), "bfloat16");
  EXPECT_EQ(BFloat16(8).ToString(), "bfloat16x8");
  EXPECT_TRUE(BFloat16().is_float() && BFloat16().is_bfloat16() && !BFloat16().is_float16());
  EXPECT_TRUE(Float16().is_float16() && Float16().is_low_precision_float());
  EXPECT_FALSE(Float(32).is_low_precision_float());
  EXPECT_EQ(BFloat16().bytes(), 2);
  EXPECT_EQ(MathComputeType(BFloat16(4)), Float(32, 4));
  EXPECT_EQ(MathComputeType(Float(64)), Float(64));
}

TEST(Types, HostConversionsRoundToNearestEven) {
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie to even
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);      // tie to even: zero
  EXPECT_EQ(FloatToHalfBits(3 * std::ldexp(1.0f, -26)), 0x0001);  // above the tie
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(std::nanf("")))));
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  // Every half round-trips through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaN
    ASSERT_EQ(FloatToHalfBits(HalfBitsToFloat(h)), h) << std::hex << h;
  }
  // One rounding from double: float first would make an exact tie and round to 1.0.
  EXPECT_EQ(RoundToType(Float16(), 1 + std::ldexp(1, -11) + std::ldexp(1, -40)),
            1 + std::ldexp(1, -10));
  EXPECT_EQ(RoundToType(BFloat16(), 1 + std::ldexp(1, -8) + std::ldexp(1, -40)),
            1 + std::ldexp(1, -7));
}

TEST(Types, SixteenBitConstantsHoldValuesOfTheirType) {
  Expr h = MakeConst(Float16(), 0.1);
  ASSERT_TRUE(h.As<FloatImm>());
  EXPECT_EQ(h.As<FloatImm>()->value, 0.0999755859375);
  EXPECT_EQ(ToString(h), "0.0999755859375_float16");
  Expr b = MakeConst(BFloat16(), 0.1);
  EXPECT_EQ(b.As<FloatImm>()->value, 0.10009765625);
  EXPECT_EQ(ToString(b), "0.10009765625_bfloat16");
}

TEST(Types, FoldingRoundsToTheType) {
  // 1 + 2^-11 in float16 is a tie that rounds to 1.0; in double it would not.
  Expr sum = MakeConst(Float16(), 1.0) + MakeConst(Float16(), std::ldexp(1, -11));
  Stmt s = Evaluate::Make(sum);
  Expr folded = Simplify(s).As<Evaluate>()->value;
  ASSERT_TRUE(folded.As<FloatImm>()) << ToString(folded);
  EXPECT_EQ(folded.As<FloatImm>()->value, 1.0);
  EXPECT_EQ(folded.type(), Float16());
  // A cast of a float32 constant folds with one rounding to bfloat16.
  Expr cast = Cast::Make(BFloat16(), Expr(1.0f + 3 * std::ldexp(1.0f, -8)));
  Expr c = Simplify(Evaluate::Make(cast)).As<Evaluate>()->value;
  ASSERT_TRUE(c.As<FloatImm>());
  EXPECT_EQ(c.As<FloatImm>()->value, 1 + std::ldexp(1, -6));
}

TEST(Types, MathHelpersBuildTypedCalls) {
  Var x("x", Float16());
  Expr e = Exp(x);
  auto* call = e.As<Call>();
  ASSERT_TRUE(call);
  EXPECT_EQ(call->name, "exp");
  EXPECT_EQ(call->type, Float16());
  Expr p = Pow(x, Expr(2.0));
  EXPECT_EQ(p.As<Call>()->args[1].type(), Float16());  // the constant adopts x's type
  EXPECT_EQ(MathOpFromName("abs"), MathOp::kAbs);
  EXPECT_FALSE(MathOpFromName("fabs").has_value());  // C spellings belong to the backends
  EXPECT_EQ(MathOpFromName("rsqrt"), MathOp::kRsqrt);
  EXPECT_FALSE(MathOpFromName("frobnicate").has_value());
  EXPECT_EQ(GetMathOpInfo(MathOp::kPow).arity, 2);
}

TEST(TypesError, MathCallCheckNamesFunctionAndTensor) {
  auto buf = MakeBuffer("Y", Int(32), {4});
  Var i("i");
  Stmt body = For::Make(i, 0, 4, ForKind::kSerial, Store::Make(buf, {i}, Tanh(i)));
  absl::Status s = CheckMathCalls("f", body);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "function f: tensor Y: math function tanh takes a floating-point type (float16, "
            "bfloat16, float32, float64), got int32");
  auto fbuf = MakeBuffer("Z", Float(32), {4});
  Var x("x", Float(32));
  Stmt two = Store::Make(fbuf, {0}, Call::Make(Float(32), "pow", {x}));
  EXPECT_THAT(CheckMathCalls("g", two).message(),
              HasSubstr("function g: tensor Z: math function pow takes 2 arguments, got 1"));
}

}  // namespace
}  // namespace cinn_like::ir
