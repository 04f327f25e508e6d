/// \file The simplifier, before and after.
#include "ir/transforms/simplify.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/math.h"
#include "ir/printer.h"

namespace cinn_like::ir {
namespace {

TEST(Simplify, FoldsConstantsAndIdentities) {
  Var x("x"), n("n");
  EXPECT_EQ(ToString(Simplify(Expr(3) + 4)), "7");
  EXPECT_EQ(ToString(Simplify(x * 1 + 0)), "x");
  EXPECT_EQ(ToString(Simplify((x + 3) + 4)), "(x + 7)");
  EXPECT_EQ(ToString(Simplify(2 * x)), "(x * 2)");
  EXPECT_EQ(ToString(Simplify((n + 63) / 64)), "((n + 63) / 64)");
  EXPECT_EQ(ToString(Simplify((x * 64 + 5) / 64)), "x");  // 5 / 64 == 0 for non-negative x
  EXPECT_EQ(ToString(Simplify((x * 64 + 5) % 64)), "5");
  EXPECT_EQ(ToString(Simplify(Expr(7) / 2)), "3");
  EXPECT_EQ(ToString(Simplify(Expr(-7) / 2)), "-3");  // C truncation
}

// An integer made a float exactly and back is the integer; comparisons of such floats with
// constants are decided from the integer's range (tril's mask compares an arange that way).
TEST(Simplify, IntegersThroughExactFloatsStayIntegers) {
  Var i("i", Int(32));
  Expr as_f64 = Cast::Make(Float(64), i);
  EXPECT_EQ(ToString(Simplify(Cast::Make(Int(64), as_f64))), ToString(Cast::Make(Int(64), i)));
  // float32 holds an unbounded int32 inexactly: kept.
  Expr through_f32 = Cast::Make(
      Int(32), Cast::Make(Float(32), Load::Make(MakeBuffer("B", Int(32), {Expr(8)}), {Expr(0)})));
  EXPECT_EQ(ToString(Simplify(through_f32)), ToString(through_f32));
  // A loop index below 2^24 is exact in float32.
  Var k("k", Int(32));
  Buffer out = MakeBuffer("O", Int(32), {Expr(1000)});
  Stmt loop = For::Make(k, 0, 1000, ForKind::kSerial,
                        Store::Make(out, {k}, Cast::Make(Int(32), Cast::Make(Float(32), k))));
  EXPECT_EQ(ToString(Simplify(loop)).find("float"), std::string::npos) << ToString(Simplify(loop));

  const Expr abs_i = MathCall(MathOp::kAbs, {as_f64});
  EXPECT_EQ(ToString(Simplify(abs_i < FloatImm::Make(Float(64), std::ldexp(1.0, 63)))), "true");
  EXPECT_EQ(ToString(Simplify(abs_i < FloatImm::Make(Float(64), INFINITY))), "true");
  EXPECT_EQ(ToString(Simplify(abs_i >= FloatImm::Make(Float(64), 0))), "true");
  EXPECT_EQ(ToString(Simplify(as_f64 < FloatImm::Make(Float(64), -3e9))), "false");
  // Not decided: the value may be either side.
  const Expr small = abs_i < FloatImm::Make(Float(64), 100);
  EXPECT_EQ(ToString(Simplify(small)), ToString(small));
  // An int64 made a float32 reaches 2^63 (rounded up): not below it.
  const Expr wide =
      MathCall(
          MathOp::kAbs,
          {Cast::Make(Float(32), Load::Make(MakeBuffer("W", Int(64), {Expr(8)}), {Expr(0)}))}) <
      FloatImm::Make(Float(32), std::ldexp(1.0, 63));
  EXPECT_EQ(ToString(Simplify(wide)), ToString(wide));
}

// Ranges past a type's ends may have wrapped, a variable without a bound may be negative and
// float16 overflows to infinity: none of these is decided.
TEST(Simplify, FloatRangesOfIntegersKeepTheirTypesAndOverflows) {
  Var k("k", Int(32));
  Buffer out = MakeBuffer("O", Float(32), {Expr(100)});
  auto undecided_in_loop = [&](const Expr& cond) {
    Stmt loop = For::Make(k, 0, 100, ForKind::kSerial,
                          Store::Make(out, {k},
                                      Select::Make(cond, FloatImm::Make(Float(32), 1),
                                                   FloatImm::Make(Float(32), 0))));
    return ToString(Simplify(loop)).find("select") != std::string::npos;
  };
  // int8(k) + 100 reaches 199 in the arithmetic, which int8 wraps to negative values.
  const Expr wrapped = Cast::Make(Int(8), k) + IntImm::Make(Int(8), 100);
  EXPECT_TRUE(undecided_in_loop(Cast::Make(Float(32), wrapped) > FloatImm::Make(Float(32), 50)));
  // In range, it is decided.
  EXPECT_FALSE(undecided_in_loop(Cast::Make(Float(32), k) < FloatImm::Make(Float(32), 1000)));
  // uint32(k) - 5 wraps below zero: not exact in float32, so the casts stay.
  const Expr u = Cast::Make(UInt(32), k) - IntImm::Make(UInt(32), 5);
  const Expr through = Cast::Make(Int(64), Cast::Make(Float(32), u));
  Stmt keep = For::Make(k, 0, 100, ForKind::kSerial,
                        Store::Make(MakeBuffer("L", Int(64), {Expr(100)}), {k}, through));
  EXPECT_NE(ToString(Simplify(keep)).find("float32"), std::string::npos)
      << ToString(Simplify(keep));
  // A free variable may be negative.
  Var v("v", Int(32));
  const Expr negative = Cast::Make(Float(64), v) < FloatImm::Make(Float(64), 0);
  EXPECT_EQ(ToString(Simplify(negative)), ToString(negative));
  // float16 of an int32 may be infinite.
  const Expr finite =
      MathCall(MathOp::kAbs, {Cast::Make(Float16(), v)}) < FloatImm::Make(Float16(), INFINITY);
  EXPECT_EQ(ToString(Simplify(finite)), ToString(finite));
}

TEST(Simplify, LoopBoundsDecideGuards) {
  Var i("i"), j("j"), n("n");
  Buffer c = MakeBuffer("C", Float(32), {Expr(1024)});
  Stmt store = Store::Make(c, {i * 32 + j}, FloatImm::Make(Float(32), 1));
  Stmt always =
      For::Make(i, 0, 32, ForKind::kSerial,
                For::Make(j, 0, 32, ForKind::kSerial, IfThenElse::Make(i * 32 + j < 1024, store)));
  EXPECT_EQ(ToString(Simplify(always)).find("if"), std::string::npos);
  Stmt maybe = For::Make(i, 0, 32, ForKind::kSerial, IfThenElse::Make(i * 32 < n, store));
  EXPECT_NE(ToString(Simplify(maybe)).find("if (((i * 32) < n))"), std::string::npos);
}

// A thread's index is below its launch's extent (the widest loop bound to its axis in the
// kernel), also in a stage computed per thread outside those loops; an index widened to int64
// keeps its range, and a select its branches' union: HF's padding mask read in a softmax
// (an index into the mask, clamped and wrapped as PyTorch's indexing does) is the plain index.
TEST(Simplify, ThreadIndicesCastsAndSelectsHaveRanges) {
  Var b("b"), t("t"), u("u");
  Buffer c = MakeBuffer("C", Int(64), {Expr(4096)});
  Expr tx = Call::Make(Int(32), IntrinsicOp::kThreadIndex, {Expr(0)});
  Expr key = Cast::Make(Int(64), tx * 8 % 512);
  Expr wrapped = Select::Make(key < Expr(int64_t{0}), key + Expr(int64_t{512}), key);
  Expr index = Cast::Make(Int(64), b) * Expr(int64_t{512}) + wrapped;
  Expr clamped = Max::Make(Min::Make(index, Expr(int64_t{4095})), Expr(int64_t{0}));
  Stmt per_thread = Store::Make(c, {Cast::Make(Int(32), clamped)}, clamped);
  Stmt in_loop = For::Make(t, 0, 64, ForKind::kGpuThread, Store::Make(c, {t}, index), 0);
  Stmt kernel = For::Make(b, 0, 8, ForKind::kGpuBlock, Block::Make({in_loop, per_thread}), 0);
  const std::string got = ToString(Simplify(kernel));
  EXPECT_EQ(got.find("select"), std::string::npos) << got;
  EXPECT_EQ(got.find("min("), std::string::npos) << got;
  EXPECT_EQ(got.find("max("), std::string::npos) << got;
  EXPECT_EQ(got.find("% 512"), std::string::npos) << got;
  // Wider threads: 128 of them make thread_index(0) * 8 reach 1016, and the remainder stays.
  Stmt wide = For::Make(u, 0, 128, ForKind::kGpuThread, Store::Make(c, {u}, index), 0);
  Stmt wider = For::Make(b, 0, 8, ForKind::kGpuBlock, Block::Make({wide, per_thread}), 0);
  EXPECT_NE(ToString(Simplify(wider)).find("% 512"), std::string::npos);
  // Outside any kernel nothing bounds the thread index from above.
  EXPECT_NE(ToString(Simplify(per_thread)).find("% 512"), std::string::npos);
  // The launch is as wide as the widest thread loop of the whole nest: a serial loop around
  // two block loops whose thread loops are 256 and 64 wide launches 256 threads.
  Var s("s"), b2("b2");
  Stmt both = For::Make(s, 0, 2, ForKind::kSerial,
                        Block::Make({For::Make(b, 0, 8, ForKind::kGpuBlock, wide, 0),
                                     For::Make(b2, 0, 8, ForKind::kGpuBlock,
                                               Block::Make({in_loop, per_thread}), 0)}));
  EXPECT_NE(ToString(Simplify(both)).find("% 512"), std::string::npos);
  // An unsigned difference that may wrap keeps its type's range through a widening cast.
  Var i("i", Int(32));
  Expr wrapping = Cast::Make(Int(64), Cast::Make(UInt(32), i) - Cast::Make(UInt(32), Expr(1)));
  Stmt loop = For::Make(
      i, 0, 10, ForKind::kSerial,
      Store::Make(c, {i},
                  Select::Make(wrapping < Expr(int64_t{100}), Expr(int64_t{1}), Expr(int64_t{2}))));
  EXPECT_NE(ToString(Simplify(loop)).find("select"), std::string::npos);
}

TEST(Simplify, RampAlgebra) {
  Var i("i");
  Expr e = Broadcast::Make(i * 256, 8) + Ramp::Make(Expr(0), Expr(1), 8);
  EXPECT_EQ(ToString(Simplify(e)), "ramp((i * 256), 1, 8)");
  Expr m = Ramp::Make(i, Expr(1), 4) * Broadcast::Make(Expr(2), 4);
  EXPECT_EQ(ToString(Simplify(m)), "ramp((i * 2), 2, 4)");
}

// A fused index vectorized by 4 and split back into the dims [x / 8192, x % 8192] stays a
// dense vector access: every lane is in one row when the base is a multiple of the lanes.
TEST(Simplify, RampsSplitIntoDimsStayDense) {
  Var i("i"), j("j");
  Expr x = Ramp::Make(i * 4, Expr(1), 4);
  EXPECT_EQ(ToString(Simplify(x / Broadcast::Make(Expr(8192), 4))),
            "broadcast(((i * 4) / 8192), 4)");
  EXPECT_EQ(ToString(Simplify(x % Broadcast::Make(Expr(8192), 4))), "ramp(((i * 4) % 8192), 1, 4)");
  // The lanes may cross a row: a base that is not a known multiple of 4, a row of 6.
  Expr y = Ramp::Make(i * 2, Expr(1), 4);
  EXPECT_EQ(ToString(Simplify(y / Broadcast::Make(Expr(8192), 4))).find("broadcast((i"),
            std::string::npos);
  EXPECT_EQ(ToString(Simplify(x / Broadcast::Make(Expr(6), 4))).find("broadcast((i"),
            std::string::npos);
  // Flattened again, the split index is the fused one (C division and remainder, any sign).
  Expr k = i * 7 + j;
  EXPECT_EQ(ToString(Simplify(k / 64 * 64 + k % 64)), "((i * 7) + j)");
  EXPECT_EQ(ToString(Simplify(k % 64 + k / 64 * 64)), "((i * 7) + j)");
  EXPECT_NE(ToString(Simplify(k / 64 * 32 + k % 64)), "((i * 7) + j)");
}

// An NCHW index vectorized by 8 (W = 56, C = 64): split into its four dims and flattened
// again it is the fused index, a dense ramp; the dims above W are broadcasts, whose division
// and remainder stay broadcasts of the scalar ones.
TEST(Simplify, FourDimIndexSplitAndFlattenedStaysOneRamp) {
  Var i("i");
  Expr x = Broadcast::Make(i * 8, 8) + Ramp::Make(Expr(0), Expr(1), 8);
  auto b = [](int v) { return Broadcast::Make(Expr(v), 8); };
  Expr w = x % b(56), h = x / b(56) % b(56), c = x / b(56) / b(56) % b(64);
  Expr n = x / b(56) / b(56) / b(64);
  Expr flat = ((n * b(64) + c) * b(56) + h) * b(56) + w;
  EXPECT_EQ(ToString(Simplify(flat)), "ramp((i * 8), 1, 8)");
  EXPECT_EQ(ToString(Simplify(c)), "broadcast(((((i * 8) / 56) / 56) % 64), 8)");
  EXPECT_EQ(ToString(Simplify(b(17) / b(5))), "broadcast(3, 8)");
  EXPECT_EQ(ToString(Simplify(b(17) % b(5))), "broadcast(2, 8)");
}

}  // namespace
}  // namespace cinn_like::ir

namespace cinn_like::ir {
namespace {

TEST(KnownDivisor, FollowsProductsSumsRemaindersCastsAndLets) {
  Var i("i"), j("j"), row("row");
  EXPECT_EQ(KnownDivisor((i * 4 + j * 8) * 2), 8);
  EXPECT_EQ(KnownDivisor(i * 4 + 2), 2);
  EXPECT_EQ(KnownDivisor(i - j), 1);
  // (i * 4) % 8192 is i * 4 - 8192 * q: a multiple of 4, whichever way q rounds.
  EXPECT_EQ(KnownDivisor((i * 4) % 8192), 4);
  EXPECT_EQ(KnownDivisor((i * 4) % 6), 2);
  EXPECT_EQ(KnownDivisor((i * 4) / 2), 1);
  EXPECT_EQ(KnownDivisor(Cast::Make(Int(64), i * 16)), 16);
  EXPECT_EQ(KnownDivisor(Expr(0)), int64_t{1} << 30);
  // Past the cap (2^30) a divisor keeps its power of two: 2^30 + 1 is odd, 3 * 2^31 even.
  const int64_t odd = (int64_t{1} << 30) + 1;
  EXPECT_EQ(KnownDivisor(Cast::Make(Int(64), i) * Expr(odd)), 1);
  EXPECT_EQ(KnownDivisor(Expr(int64_t{3} << 31)), int64_t{1} << 30);
  EXPECT_EQ(KnownDivisor((i * 1025) * (j * 1048577)), 1);
  EXPECT_EQ(KnownDivisor((i * 1024) * (j * 2048)), int64_t{1} << 21);
  // A narrowing cast wraps: nothing is known.
  EXPECT_EQ(KnownDivisor(Cast::Make(Int(8), i * 16)), 1);
  // A let's value measured before: row * 512 + i * 16 + 8 is a multiple of 8.
  std::map<const Variable*, int64_t> lets = {{row.node(), KnownDivisor(row * 512)}};
  EXPECT_EQ(KnownDivisor(row + i * 16 + 8, &lets), 8);
  EXPECT_EQ(KnownDivisor(row + i * 16 + 8), 1);
}

}  // namespace
}  // namespace cinn_like::ir
