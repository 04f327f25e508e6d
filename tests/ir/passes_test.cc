/// \file The guard passes before and after: redundant guard removal, loop partitioning, and
/// vectorization with a scalar tail; each also where it must not fire.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/transforms/hoist_common_index.h"
#include "ir/transforms/linear_form.h"
#include "ir/transforms/loop_partition.h"
#include "ir/transforms/remove_redundant_guards.h"
#include "ir/transforms/simplify.h"
#include "ir/transforms/vectorize.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

Stmt Serial(Var v, Expr extent, Stmt body) {
  return For::Make(std::move(v), 0, std::move(extent), ForKind::kSerial, std::move(body));
}

/// C[i] = A[i] + 1 as a store.
Stmt AddOne(const Buffer& c, const Buffer& a, Expr i) {
  return Store::Make(c, {i}, Load::Make(a, {i}) + 1.0f);
}

class GuardPasses : public ::testing::Test {
 protected:
  Var n{"n"}, m{"m"}, i{"i"}, o{"o"}, v{"v"};
  Buffer a = MakeBuffer("A", Float(32), {n});
  Buffer c = MakeBuffer("C", Float(32), {n});
};

// ---- RemoveRedundantGuards

TEST_F(GuardPasses, GuardImpliedBySymbolicLoopBoundIsRemoved) {
  Stmt before = Serial(i, n, IfThenElse::Make(i < n, AddOne(c, a, i)));
  EXPECT_EQ(ToString(RemoveRedundantGuards(before)),
            "for (i, 0, n) {\n"
            "  C[i] = (A[i] + 1.0f)\n"
            "}\n");
}

TEST_F(GuardPasses, GuardImpliedByConstantSplitIsRemoved) {
  Expr idx = o * 64 + i;
  Stmt before = Serial(o, 16, Serial(i, 64, IfThenElse::Make(idx < 1024, AddOne(c, a, idx))));
  EXPECT_THAT(ToString(RemoveRedundantGuards(before)), ::testing::Not(HasSubstr("if")));
  // Symbolic: o < m and i < 64 give o * 64 + i < m * 64.
  Stmt symbolic = Serial(o, m, Serial(i, 64, IfThenElse::Make(idx < m * 64, AddOne(c, a, idx))));
  EXPECT_THAT(ToString(RemoveRedundantGuards(symbolic)), ::testing::Not(HasSubstr("if")));
}

TEST_F(GuardPasses, NestedImpliedConditionsAreRemovedAndOthersKept) {
  Expr idx = o * 4 + 1;
  Stmt before = Serial(
      o, m,
      IfThenElse::Make(o * 4 + 3 < n && o < m,
                       IfThenElse::Make(o * 4 + 3 < n && idx < n && o < 7, AddOne(c, a, idx))));
  EXPECT_EQ(ToString(RemoveRedundantGuards(before)),
            "for (o, 0, m) {\n"
            "  if ((((o * 4) + 3) < n)) {\n"
            "    if ((o < 7)) {\n"
            "      C[((o * 4) + 1)] = (A[((o * 4) + 1)] + 1.0f)\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST_F(GuardPasses, OuterSplitGuardImpliedByTheInnerOneIsRemoved) {
  // Split n by 4, then the outer by 256: the outer guard follows from the inner one.
  Expr x = o * 256 + i;
  Stmt before = Serial(
      o, ((n + 3) / 4 + 255) / 256,
      Serial(i, 256,
             Serial(v, 4,
                    IfThenElse::Make(x < (n + 3) / 4 && x * 4 + v < n, AddOne(c, a, x * 4 + v)))));
  EXPECT_THAT(ToString(RemoveRedundantGuards(before)),
              HasSubstr("      if ((((((o * 256) + i) * 4) + v) < n)) {\n"));
  // Without the inner conjunct nothing implies the outer one.
  Stmt alone = Serial(o, ((n + 3) / 4 + 255) / 256,
                      Serial(i, 256, IfThenElse::Make(x < (n + 3) / 4, AddOne(c, a, x))));
  EXPECT_TRUE(RemoveRedundantGuards(alone).same_as(alone));
}

TEST_F(GuardPasses, RealTailGuardsStay) {
  Expr idx = o * 64 + i;
  Stmt tail = Serial(o, (n + 63) / 64, Serial(i, 64, IfThenElse::Make(idx < n, AddOne(c, a, idx))));
  EXPECT_TRUE(RemoveRedundantGuards(tail).same_as(tail));
  Stmt tighter = Serial(i, n, IfThenElse::Make(i < n - 1, AddOne(c, a, i)));
  EXPECT_TRUE(RemoveRedundantGuards(tighter).same_as(tighter));
  // A branch with an else is a choice, not a guard.
  Stmt choice = Serial(i, n, IfThenElse::Make(i < n, AddOne(c, a, i), AddOne(c, a, 0)));
  EXPECT_TRUE(RemoveRedundantGuards(choice).same_as(choice));
}

// ---- PartitionLoops

TEST_F(GuardPasses, SerialSplitLoopGetsAGuardFreeMainPartAndATail) {
  Expr idx = o * 64 + i;
  Stmt before =
      Serial(o, (n + 63) / 64, Serial(i, 64, IfThenElse::Make(idx < n, AddOne(c, a, idx))));
  EXPECT_EQ(ToString(PartitionLoops(before)),
            "for (o, 0, (n / 64)) {\n"
            "  for (i, 0, 64) {\n"
            "    C[((o * 64) + i)] = (A[((o * 64) + i)] + 1.0f)\n"
            "  }\n"
            "}\n"
            "for (o, (n / 64), (((n + 63) / 64) - (n / 64))) {\n"
            "  for (i, 0, 64) {\n"
            "    if ((((o * 64) + i) < n)) {\n"
            "      C[((o * 64) + i)] = (A[((o * 64) + i)] + 1.0f)\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST_F(GuardPasses, ParallelLoopsStayParallelInBothParts) {
  Expr idx = o * 8 + i;
  Stmt before = For::Make(o, 0, (n + 7) / 8, ForKind::kParallel,
                          Serial(i, 8, IfThenElse::Make(idx < n, AddOne(c, a, idx))));
  std::string after = ToString(PartitionLoops(before));
  EXPECT_THAT(after, HasSubstr("parallel for (o, 0, (n / 8)) {\n"
                               "  for (i, 0, 8) {\n"
                               "    C[((o * 8) + i)]"));
  EXPECT_THAT(after, HasSubstr("parallel for (o, (n / 8), (((n + 7) / 8) - (n / 8))) {\n"
                               "  for (i, 0, 8) {\n"
                               "    if ((((o * 8) + i) < n)) {"));
}

TEST_F(GuardPasses, PartitionDoesNotTouchGpuLoopsOrNonAffineGuards) {
  Expr idx = o * 64 + i;
  Stmt gpu = For::Make(
      o, 0, (n + 63) / 64, ForKind::kGpuBlock,
      For::Make(i, 0, 64, ForKind::kGpuThread, IfThenElse::Make(idx < n, AddOne(c, a, idx)), 0), 0);
  EXPECT_TRUE(PartitionLoops(gpu).same_as(gpu));
  Stmt square = Serial(o, n, IfThenElse::Make(o * o < n, AddOne(c, a, o)));
  EXPECT_TRUE(PartitionLoops(square).same_as(square));
  // A guard that holds for large o rather than small (negative coefficient) stays.
  Stmt lower = Serial(o, n, IfThenElse::Make(o > 5, AddOne(c, a, o)));
  EXPECT_TRUE(PartitionLoops(lower).same_as(lower));
}

TEST_F(GuardPasses, ThreadDependentSplitOfALoopWithSharedMemoryIsNotMade) {
  // for o: S[t] = A[o * 64 + t] (guarded); C[..] = S[63 - t]. insert_sync puts barriers in the
  // o loop; split at a t-dependent point, threads would run them a different number of times
  // in each part. The same loop on a local buffer may be split per thread.
  Var t("t");
  Expr idx = o * 64 + t;
  auto body = [&](const Buffer& staged) {
    Stmt copy = IfThenElse::Make(idx < n, Store::Make(staged, {t}, Load::Make(a, {idx})));
    Stmt use = IfThenElse::Make(idx < n, Store::Make(c, {idx}, Load::Make(staged, {63 - t})));
    return For::Make(t, 0, 64, ForKind::kGpuThread,
                     Serial(o, (n + 63) / 64, Block::Make({copy, use})), 0);
  };
  Stmt shared = body(MakeBuffer("S", Float(32), {Expr(64)}, MemoryScope::kShared));
  EXPECT_TRUE(PartitionLoops(shared).same_as(shared)) << ToString(PartitionLoops(shared));
  Stmt local = body(MakeBuffer("S", Float(32), {Expr(64)}, MemoryScope::kLocal));
  EXPECT_THAT(ToString(PartitionLoops(local)), HasSubstr("for (o, 0, min(")) << ToString(local);
}

// ---- VectorizeLoops with a lane-dependent guard

TEST_F(GuardPasses, VectorizedLoopWithTailGuardBranchesToAScalarTail) {
  Expr idx = o * 4 + v;
  Stmt before = Serial(
      o, (n + 3) / 4,
      For::Make(v, 0, 4, ForKind::kVectorized, IfThenElse::Make(idx < n, AddOne(c, a, idx))));
  EXPECT_EQ(ToString(Simplify(VectorizeLoops(before))),
            "for (o, 0, ((n + 3) / 4)) {\n"
            "  if ((((o * 4) + 3) < n)) {\n"
            "    C[ramp((o * 4), 1, 4)] = (A[ramp((o * 4), 1, 4)] + broadcast(1.0f, 4))\n"
            "  } else {\n"
            "    for (v, 0, 4) {\n"
            "      if ((((o * 4) + v) < n)) {\n"
            "        C[((o * 4) + v)] = (A[((o * 4) + v)] + 1.0f)\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST_F(GuardPasses, LaneGuardConjunctsAreSplitFromScalarOnes) {
  Expr idx = o * 4 + v;
  Stmt before = Serial(o, (n + 3) / 4,
                       For::Make(v, 0, 4, ForKind::kVectorized,
                                 IfThenElse::Make(o < m && idx < n, AddOne(c, a, idx))));
  std::string after = ToString(Simplify(VectorizeLoops(before)));
  EXPECT_THAT(after, HasSubstr("  if ((((o * 4) + 3) < n)) {\n"
                               "    if ((o < m)) {\n"
                               "      C[ramp((o * 4), 1, 4)]"));
}

TEST_F(GuardPasses, NonAffineLaneGuardKeepsTheLoopSerial) {
  Stmt before = Serial(o, n,
                       For::Make(v, 0, 4, ForKind::kVectorized,
                                 IfThenElse::Make(v * v < n, AddOne(c, a, o * 4 + v))));
  std::string after = ToString(VectorizeLoops(before));
  EXPECT_THAT(after, HasSubstr("for (v, 0, 4) {"));
  EXPECT_THAT(after, ::testing::Not(HasSubstr("ramp")));
}

// ---- The affine forms the passes share

TEST(LinearForm, CollectsTermsAndBoundsOverRanges) {
  Var x("x"), y("y"), n("n");
  LinearForm f = LinearForm::Of((x * 4 + y) * 2 - (x * 8 + n) + 3);
  EXPECT_EQ(f.constant, 3);
  EXPECT_EQ(f.Coeff(x.node()), 0);
  EXPECT_EQ(f.Coeff(y.node()), 2);
  EXPECT_EQ(f.Coeff(n.node()), -1);
  RangeMap ranges{{y.node(), {Expr(0), n - 2}}};
  // 2y - n + 3 <= 2(n - 2) - n + 3 = n - 1: not provably <= 0; 2y - 2n + 4 is.
  EXPECT_FALSE(ProvablyNonPositive(f, ranges));
  LinearForm g = LinearForm::Of(y * 2 - n * 2 + 4);
  EXPECT_TRUE(ProvablyNonPositive(g, ranges));
}

}  // namespace
}  // namespace cinn_like::ir

namespace cinn_like::ir {
namespace {

// ---- HoistCommonIndex

TEST(HoistCommonIndex, InvariantIndexLeavesTheInnerLoopAndRepeatsShareOneName) {
  Var i("i"), j("j"), k("k");
  Buffer a = MakeBuffer("A", Float(32), {Expr(1 << 20)});
  Buffer c = MakeBuffer("C", Float(32), {Expr(1 << 20)});
  Expr row = i * 1024 + j * 32;
  Stmt before =
      Serial(i, 32,
             Serial(j, 32,
                    Serial(k, 32,
                           Store::Make(c, {row + k},
                                       Load::Make(a, {row + k}) + Load::Make(a, {row + k + 1})))));
  EXPECT_EQ(ToString(HoistCommonIndex(before)),
            "for (i, 0, 32) {\n"
            "  let idx0 = (i * 1024)\n"
            "  for (j, 0, 32) {\n"
            "    let idx1 = (idx0 + (j * 32))\n"
            "    for (k, 0, 32) {\n"
            "      C[(idx1 + k)] = (A[(idx1 + k)] + A[((idx1 + k) + 1)])\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(HoistCommonIndex, LeavesCheapOrUnsafeSubtermsAndTopLevelLoopsAlone) {
  Var i("i"), j("j"), n("n");
  Buffer a = MakeBuffer("A", Float(32), {n});
  Buffer idx = MakeBuffer("Idx", Int(32), {n});
  // Top level: nothing to hoist to; i + j has no multiplication; a division by a variable
  // could fault where the loop would not run; a load may change inside the loop.
  Stmt top = Serial(i, n, Store::Make(a, {i * 4}, Expr(1.0f)));
  EXPECT_TRUE(HoistCommonIndex(top).same_as(top));
  Stmt cheap = Serial(i, n, Serial(j, 4, Store::Make(a, {i + j}, Expr(1.0f))));
  EXPECT_TRUE(HoistCommonIndex(cheap).same_as(cheap));
  Stmt risky = Serial(i, n, Serial(j, 4, Store::Make(a, {i / n + j}, Expr(1.0f))));
  EXPECT_TRUE(HoistCommonIndex(risky).same_as(risky));
  Stmt gather =
      Serial(i, n, Serial(j, 4, Store::Make(a, {Load::Make(idx, {i}) * 4 + j}, Expr(1.0f))));
  EXPECT_TRUE(HoistCommonIndex(gather).same_as(gather));
}

}  // namespace
}  // namespace cinn_like::ir
