/// \file DType rounding (float16, bfloat16, integer wrap) and numpy broadcasting of shapes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "hlir/dtype.h"
#include "hlir/shape.h"
#include "ir/ir.h"

namespace cinn_like::hlir {
namespace {

using ::testing::HasSubstr;

TEST(RoundToDType, Float16RoundsToNearestEvenAndOverflows) {
  EXPECT_EQ(RoundToDType(1.0 / 3.0, DType::kFloat16), 0.333251953125);
  EXPECT_EQ(RoundToDType(2049.0, DType::kFloat16), 2048.0);  // tie between 2048 and 2050: even
  EXPECT_EQ(RoundToDType(2051.0, DType::kFloat16), 2052.0);  // tie between 2050 and 2052: even
  EXPECT_EQ(RoundToDType(65504.0, DType::kFloat16), 65504.0);
  EXPECT_TRUE(std::isinf(RoundToDType(65520.0, DType::kFloat16)));
  EXPECT_EQ(RoundToDType(std::ldexp(1.0, -24), DType::kFloat16),
            std::ldexp(1.0, -24));  // subnormal
  EXPECT_EQ(RoundToDType(std::ldexp(1.0, -26), DType::kFloat16), 0.0);
  EXPECT_TRUE(std::isnan(RoundToDType(NAN, DType::kFloat16)));
}

TEST(RoundToDType, BFloat16KeepsEightBitsOfMantissa) {
  EXPECT_EQ(RoundToDType(1.0 + 1.0 / 256, DType::kBFloat16), 1.0);  // tie: even
  EXPECT_EQ(RoundToDType(1.0 + 3.0 / 256, DType::kBFloat16), 1.0 + 4.0 / 256);
  EXPECT_EQ(RoundToDType(3e38, DType::kBFloat16), 226 * std::ldexp(1.0, 120));
}

TEST(RoundToDType, IntegersTruncateAndWrap) {
  EXPECT_EQ(RoundToDType(-2.7, DType::kInt32), -2.0);
  EXPECT_EQ(RoundToDType(130.0, DType::kInt8), -126.0);
  EXPECT_EQ(RoundToDType(-1.0, DType::kUInt8), 255.0);
  EXPECT_EQ(RoundToDType(NAN, DType::kInt64), 0.0);
  // int64 wraps modulo 2^64 too (a plain cast past its range is undefined); -1 must not round
  // through -1 + 2^64.
  EXPECT_EQ(RoundToDType(-1.0, DType::kInt64), -1.0);
  EXPECT_EQ(RoundToDType(std::ldexp(1.0, 63), DType::kInt64), -std::ldexp(1.0, 63));
  EXPECT_EQ(RoundToDType(1e20, DType::kInt64), 1e20 - 5 * std::ldexp(1.0, 64));
  EXPECT_EQ(RoundToDType(-1e308, DType::kInt64), static_cast<double>(ir::WrapToInt64(-1e308)));
  EXPECT_EQ(ir::WrapToInt64(-3.5), -3);
  EXPECT_EQ(ir::WrapToInt64(std::ldexp(1.0, 64) + std::ldexp(1.0, 12)), 4096);
  EXPECT_EQ(RoundToDType(0.5, DType::kBool), 1.0);
  EXPECT_EQ(RoundToDType(0.1, DType::kFloat32), static_cast<double>(0.1f));
}

TEST(DTypeNames, ParseEveryNameAndRejectOthers) {
  for (const char* n : {"bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16",
                        "float32", "float64"}) {
    auto t = ParseDType(n);
    ASSERT_TRUE(t.ok()) << n;
    EXPECT_STREQ(DTypeName(*t), n);
  }
  auto bad = ParseDType("float8");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown dtype 'float8'"));
}

TEST(Broadcast, NumpyRulesWithSymbols) {
  auto s = BroadcastShapes({Dim::Known(3), Dim::Known(1), Dim::Known(5)}, MakeShape({4, 5}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(ShapeToString(*s), "[3, 4, 5]");
  auto sym = BroadcastShapes({Dim::Symbol("n"), Dim::Known(1)}, {Dim::Known(1), Dim::Known(8)});
  ASSERT_TRUE(sym.ok());
  EXPECT_EQ(ShapeToString(*sym), "[n, 8]");
  auto bad = BroadcastShapes(MakeShape({2, 3}), MakeShape({4, 3}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("shapes [2, 3] and [4, 3] do not broadcast: dim 2 against 4"));
  EXPECT_FALSE(BroadcastShapes({Dim::Symbol("n")}, {Dim::Symbol("m")}).ok());
}

}  // namespace
}  // namespace cinn_like::hlir
