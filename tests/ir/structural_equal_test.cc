/// \file StructuralEqual and StructuralHash, and the passes that decide "same expression" with
/// them: two distinct Vars named alike are different expressions (ir/ir.h), however they print.
#include "ir/structural_equal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/printer.h"
#include "ir/schedule_region.h"
#include "ir/transforms/lower_thread_reduce.h"
#include "ir/transforms/reduce_update.h"
#include "ir/transforms/vectorize_reduce.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

class StructuralEqualTest : public ::testing::Test {
 protected:
  Var i{"i"}, i2{"i"}, j{"j"}, n{"n"};
  Buffer a = MakeBuffer("A", Float(32), {n});
  Buffer a2 = MakeBuffer("A", Float(32), {n});  // another buffer of the same name
};

TEST_F(StructuralEqualTest, RebuiltTreesAreEqualAndHashAlike) {
  Expr x = Load::Make(a, {i * 4 + j}) + 1.5f;
  Expr y = Load::Make(a, {i * 4 + j}) + 1.5f;
  ASSERT_FALSE(x.same_as(y));
  EXPECT_TRUE(StructuralEqual(x, y));
  EXPECT_EQ(StructuralHash(x), StructuralHash(y));
  EXPECT_TRUE(StructuralEqual(Expr(), Expr()));
  EXPECT_FALSE(StructuralEqual(x, Expr()));
}

TEST_F(StructuralEqualTest, DistinctVarsOfOneNameDiffer) {
  ASSERT_EQ(ToString(i), ToString(i2));
  EXPECT_FALSE(StructuralEqual(i, i2));
  EXPECT_FALSE(StructuralEqual(i + 1, i2 + 1));
  EXPECT_NE(StructuralHash(i + 1), StructuralHash(i2 + 1));
  EXPECT_TRUE(StructuralEqual(i + 1, i + 1));
}

TEST_F(StructuralEqualTest, MapFreeVarsPairsVariablesOneToOne) {
  EXPECT_TRUE(StructuralEqual(i + 1, i2 + 1, /*map_free_vars=*/true));
  EXPECT_TRUE(StructuralEqual(i * j + i, j * i + j, true));   // i <-> j
  EXPECT_FALSE(StructuralEqual(i + i, i + j, true));          // i -> i, then i -> j
  EXPECT_FALSE(StructuralEqual(i + j, i + i, true));          // i -> i, then j -> i
  EXPECT_FALSE(StructuralEqual(i, Var("k", Int(64)), true));  // types differ
  EXPECT_FALSE(StructuralEqual(i + 1, i2 + 2, true));
  // The hash follows the pairing: first-appearance order, not node identity.
  EXPECT_EQ(StructuralHash(i * j + i, true), StructuralHash(j * i + j, true));
  EXPECT_EQ(StructuralHash(i + 1, true), StructuralHash(i2 + 1, true));
  EXPECT_NE(StructuralHash(i + i, true), StructuralHash(i + j, true));
}

TEST_F(StructuralEqualTest, ConstantsAndTypes) {
  EXPECT_FALSE(StructuralEqual(Expr(1), Expr(2)));
  EXPECT_FALSE(StructuralEqual(Expr(1), Expr(int64_t{1})));  // int32 vs int64
  EXPECT_FALSE(StructuralEqual(Expr(1.0f), Expr(1.0)));      // float32 vs float64
  EXPECT_TRUE(StructuralEqual(Expr(0.5f), Expr(0.5f)));
  EXPECT_FALSE(StructuralEqual(Expr(0.0f), Expr(-0.0f)));  // bitwise: signed zeros differ
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(StructuralEqual(Expr(nan), Expr(-nan)));  // both NaN
  EXPECT_EQ(StructuralHash(Expr(nan)), StructuralHash(Expr(-nan)));
  EXPECT_FALSE(StructuralEqual(StringImm::Make("a"), StringImm::Make("b")));
  EXPECT_FALSE(StructuralEqual(Cast::Make(Int(64), i), Cast::Make(Int(32), i)));
  EXPECT_FALSE(StructuralEqual(i + j, i - j));
  EXPECT_FALSE(StructuralEqual(Ramp::Make(i, 1, 4), Ramp::Make(i, 1, 8)));
  EXPECT_FALSE(StructuralEqual(Broadcast::Make(i, 4), Broadcast::Make(i, 8)));
  EXPECT_FALSE(StructuralEqual(Call::Make(Float(32), "exp", {Expr(1.0f)}),
                               Call::Make(Float(32), "log", {Expr(1.0f)})));
  // A pure call spelled like an intrinsic's list name is not that intrinsic.
  const std::string sync = IntrinsicName(IntrinsicOp::kSyncThreads);
  EXPECT_FALSE(StructuralEqual(Call::Make(Int(32), sync, {}),
                               Call::Make(Int(32), IntrinsicOp::kSyncThreads, {})));
}

TEST_F(StructuralEqualTest, LoadsOfDifferentBuffersOfOneNameDiffer) {
  ASSERT_EQ(ToString(Load::Make(a, {i})), ToString(Load::Make(a2, {i})));
  EXPECT_FALSE(StructuralEqual(Load::Make(a, {i}), Load::Make(a2, {i})));
  EXPECT_FALSE(StructuralEqual(Load::Make(a, {i}), Load::Make(a2, {i}), true));
  EXPECT_TRUE(StructuralEqual(Load::Make(a, {i}), Load::Make(a, {i})));
}

TEST_F(StructuralEqualTest, Statements) {
  auto nest = [&](const Var& v, float c) {
    return For::Make(v, 0, n, ForKind::kSerial, Store::Make(a, {v}, Load::Make(a, {v}) + c));
  };
  EXPECT_TRUE(StructuralEqual(nest(i, 1.0f), nest(i, 1.0f)));
  EXPECT_EQ(StructuralHash(nest(i, 1.0f)), StructuralHash(nest(i, 1.0f)));
  EXPECT_FALSE(StructuralEqual(nest(i, 1.0f), nest(i, 2.0f)));
  EXPECT_FALSE(StructuralEqual(nest(i, 1.0f), nest(i2, 1.0f)));
  EXPECT_TRUE(StructuralEqual(nest(i, 1.0f), nest(i2, 1.0f), true));
  EXPECT_EQ(StructuralHash(nest(i, 1.0f), true), StructuralHash(nest(i2, 1.0f), true));
  Stmt body = Evaluate::Make(Expr(0));
  EXPECT_FALSE(StructuralEqual(For::Make(i, 0, n, ForKind::kSerial, body),
                               For::Make(i, 0, n, ForKind::kUnrolled, body)));
  EXPECT_FALSE(StructuralEqual(IfThenElse::Make(i < n, body), IfThenElse::Make(i < n, body, body)));
}

TEST_F(StructuralEqualTest, UpToBuffersPairsBuffersOfTheSameDtypeScopeAndShape) {
  // out[v] = in[v] + c over buffers of n floats.
  auto nest = [&](const Var& v, const Buffer& out, const Buffer& in, float c) {
    return For::Make(v, 0, n, ForKind::kSerial, Store::Make(out, {v}, Load::Make(in, {v}) + c));
  };
  Buffer b = MakeBuffer("B", Float(32), {n}), b2 = MakeBuffer("B", Float(32), {n});
  EXPECT_FALSE(StructuralEqual(nest(i, a, b, 1.0f), nest(i2, a2, b2, 1.0f), true));
  EXPECT_TRUE(StructuralEqualUpToBuffers(nest(i, a, b, 1.0f), nest(i2, a2, b2, 1.0f)));
  EXPECT_EQ(StructuralHashUpToBuffers(nest(i, a, b, 1.0f)),
            StructuralHashUpToBuffers(nest(i2, a2, b2, 1.0f)));
  // A bijection: in-place (a from a) is not the same as a from b.
  EXPECT_FALSE(StructuralEqualUpToBuffers(nest(i, a, a, 1.0f), nest(i, a, b, 1.0f)));
  EXPECT_FALSE(StructuralEqualUpToBuffers(nest(i, a, b, 1.0f), nest(i, a, a, 1.0f)));
  EXPECT_NE(StructuralHashUpToBuffers(nest(i, a, a, 1.0f)),
            StructuralHashUpToBuffers(nest(i, a, b, 1.0f)));
  // Other constants, dtypes, shapes or scopes differ.
  EXPECT_FALSE(StructuralEqualUpToBuffers(nest(i, a, b, 1.0f), nest(i, a, b2, 2.0f)));
  Buffer wider = MakeBuffer("B", Float(32), {n * 2});
  EXPECT_FALSE(StructuralEqualUpToBuffers(nest(i, a, b, 1.0f), nest(i, a, wider, 1.0f)));
  Buffer shared = MakeBuffer("B", Float(32), {n}, MemoryScope::kShared);
  EXPECT_FALSE(StructuralEqualUpToBuffers(nest(i, a, b, 1.0f), nest(i, a, shared, 1.0f)));
  Buffer doubles = MakeBuffer("B", Float(64), {n});
  auto widen = [&](const Buffer& in) {
    return For::Make(i, 0, n, ForKind::kSerial,
                     Store::Make(a, {i}, Cast::Make(Float(32), Load::Make(in, {i}))));
  };
  EXPECT_FALSE(StructuralEqualUpToBuffers(widen(doubles), widen(b)));
  // Symbolic dims pair like any free variable: n pairs with n (the loop's extent), so B of m
  // floats cannot pair with B of n.
  Var m("m");
  Buffer bm = MakeBuffer("B", Float(32), {m});
  EXPECT_FALSE(StructuralEqualUpToBuffers(nest(i, a, b, 1.0f), nest(i, a2, bm, 1.0f)));
  // A buffer's data variable pairs with the other buffer's.
  auto pass = [&](const Buffer& x) { return Evaluate::Make(x->data); };
  EXPECT_TRUE(StructuralEqualUpToBuffers(Block::Make({nest(i, a, b, 1.0f), pass(b)}),
                                         Block::Make({nest(i, a2, b2, 1.0f), pass(b2)})));
  EXPECT_FALSE(StructuralEqualUpToBuffers(Block::Make({nest(i, a, b, 1.0f), pass(b)}),
                                          Block::Make({nest(i, a2, b2, 1.0f), pass(a2)})));
}

// ---- The passes that compare expressions

TEST_F(StructuralEqualTest, ReduceUpdateNeedsTheSameIndexVariable) {
  Buffer acc = MakeBuffer("acc", Float(32), {n});
  ReduceKind kind;
  Expr e;
  Stmt same = Store::Make(acc, {i}, Load::Make(acc, {i}) + Load::Make(a, {j}));
  EXPECT_TRUE(MatchReduceUpdate(same.As<Store>(), &kind, &e));
  // acc[i] = acc[i'] + A[j] with i' another Var named "i": a copy-and-add, not a reduction.
  Stmt other = Store::Make(acc, {i}, Load::Make(acc, {i2}) + Load::Make(a, {j}));
  ASSERT_EQ(ToString(same), ToString(other));
  EXPECT_FALSE(MatchReduceUpdate(other.As<Store>(), &kind, &e));
}

/// for i (outer): for j (inner, extent e): acc[i] = acc[read] + A[j]; a reduction over j when
/// read is i, a copy-and-add when it is another Var named "i".
Stmt AccumulateNest(const Var& i, const Var& j, const Var& read, const Buffer& a, ForKind outer,
                    ForKind inner, int e) {
  Buffer acc = MakeBuffer("acc", Float(32), {Expr(16)});
  Stmt update = Store::Make(acc, {i}, Load::Make(acc, {read}) + Load::Make(a, {j}));
  int axis = inner == ForKind::kGpuThread ? 0 : -1;
  return For::Make(i, 0, 16, outer, For::Make(j, 0, e, inner, update, axis), axis);
}

TEST_F(StructuralEqualTest, VectorizeReductionsLeavesAStoreBetweenSameNamedVarsAlone) {
  auto nest = [&](const Var& read) {
    return AccumulateNest(i, j, read, a, ForKind::kSerial, ForKind::kVectorized, 8);
  };
  EXPECT_THAT(ToString(VectorizeReductions(nest(i))), HasSubstr("acc_vacc"));
  Stmt other = nest(i2);
  EXPECT_TRUE(VectorizeReductions(other).same_as(other));
}

TEST_F(StructuralEqualTest, LowerThreadReduceLeavesAStoreBetweenSameNamedVarsAlone) {
  auto nest = [&](const Var& read) {
    return AccumulateNest(i, j, read, a, ForKind::kGpuBlock, ForKind::kGpuThread, 128);
  };
  for (const Var* read : {&i, &i2}) {
    Stmt before = nest(*read);
    auto after = LowerThreadReduce(before);
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(after->same_as(before), read == &i2) << ToString(*after);
  }
}

TEST_F(StructuralEqualTest, GuardsThatPrintAlikeButUseDifferentVarsAreBothKept) {
  std::vector<Expr> guards;
  AddGuardsFreeOf((i < n && i2 < n) && i < n, {}, &guards);
  ASSERT_EQ(guards.size(), 2u);  // i < n once, i' < n kept
  EXPECT_TRUE(StructuralEqual(guards[0], i < n));
  EXPECT_TRUE(StructuralEqual(guards[1], i2 < n));
}

TEST_F(StructuralEqualTest, RegionAccessesThatPrintAlikeButUseDifferentVarsDisagree) {
  RelaxedLoops relaxed{{j.node(), 4}};
  auto region = InferRegion({{i + j}, {i + j + 1}}, relaxed, "test");
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(region->extent, std::vector<int64_t>{5});
  auto disagree = InferRegion({{i + j}, {i2 + j}}, relaxed, "test");
  ASSERT_FALSE(disagree.ok());
  EXPECT_THAT(disagree.status().message(), HasSubstr("accesses disagree in dimension 0 (i vs i)"));
}

TEST_F(StructuralEqualTest, RegionAccessesOfOneIndexWrittenTwoWaysAgree) {
  // One value read through two reshapes: a term 0 * 4096 left in one index, the sum associated
  // another way in the other (Llama's residual add read by its RMSNorm and by the next add,
  // whose compute_at failed and fell back to PyTorch).
  const Expr zero = IndexConst(0);
  const Expr first = (zero * 4096 + ((zero * 8 + i / 256) * 512 + ((i % 256) * 2 + j))) / 512;
  const Expr second = (((i / 256) * 512 + (i % 256) * 2) + j) / 512;
  auto region = InferRegion({{first}, {second}}, RelaxedLoops{}, "test");
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(region->extent, std::vector<int64_t>{1});
  // Another divisor, another remainder, another sum: different indices.
  for (const Expr& other : {(((i / 256) * 512 + (i % 256) * 2) + j) / 256,
                            (((i / 256) * 512 + (i % 256) * 2) + j) % 512,
                            (((i / 256) * 512 + (i % 256) * 4) + j) / 512}) {
    auto disagree = InferRegion({{first}, {other}}, RelaxedLoops{}, "test");
    EXPECT_FALSE(disagree.ok()) << ToString(other);
  }
}

}  // namespace
}  // namespace cinn_like::ir
