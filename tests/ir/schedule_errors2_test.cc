/// \file Misuse of the dataflow schedule primitives: each error's message names the stages,
/// the loop or the scope at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/lower.h"
#include "ir/schedule.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

/// B = A * 2, C = B + 1, S[0] = sum_k A[k] over 16 elements.
struct Graph {
  Tensor a = Placeholder("A", Float(32), {Expr(16)});
  Tensor b = Compute(
      {Expr(16)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f; }, "B");
  Tensor c = Compute(
      {Expr(16)}, [&](const std::vector<Expr>& i) { return b(i[0]) + 1.0f; }, "C");
  IterVar k = ReduceAxis(Expr(16), "k");
  Tensor s = Compute(
      {Expr(1)}, [&](const std::vector<Expr>&) { return ReduceSum(a(k.var), {k}); }, "S");
  Schedule sch = Schedule::Create({c, s});
};

TEST(ScheduleErrors2, ComputeInlineOfAReduction) {
  Graph g;
  EXPECT_EQ(g.sch[g.s].ComputeInline().message(),
            "compute_inline of stage S: it is a reduction; its value needs its own loops "
            "(compute_at it instead)");
}

TEST(ScheduleErrors2, ComputeAtALoopOfAStageThatDoesNotReadIt) {
  Graph g;
  Var si = *g.sch[g.s].LeafAxis(0);
  EXPECT_EQ(g.sch[g.b].ComputeAt(g.sch[g.s], si).message(),
            "compute_at of stage B at loop i of stage S: neither stage S nor a stage computed at "
            "that loop reads B, so its loops do not enclose a use of it");
}

TEST(ScheduleErrors2, ComputeAtALoopThatIsNotTheConsumers) {
  Graph g;
  Var bi = *g.sch[g.b].LeafAxis(0);
  auto parts = g.sch[g.c].Split(*g.sch[g.c].LeafAxis(0), 4);
  ASSERT_TRUE(parts.ok());
  Var ci = g.c->axes[0];
  EXPECT_EQ(g.sch[g.b].ComputeAt(g.sch[g.c], bi).message(),
            "compute_at of stage B at loop i of stage C: i is not a loop of stage C; its loops "
            "are i_outer, i_inner");
  EXPECT_THAT(g.sch[g.b].ComputeAt(g.sch[g.c], ci).message(),
              HasSubstr("is not a loop of stage C"));
}

TEST(ScheduleErrors2, ComputeAtAfterSchedulingTheProducer) {
  Graph g;
  ASSERT_TRUE(g.sch[g.b].Split(*g.sch[g.b].LeafAxis(0), 4).ok());
  EXPECT_EQ(g.sch[g.b].ComputeAt(g.sch[g.c], *g.sch[g.c].LeafAxis(0)).message(),
            "compute_at of stage B at loop i of stage C: schedule this stage's own loops after "
            "compute_at, not before");
}

TEST(ScheduleErrors2, ConsumerRescheduledAfterComputeAt) {
  Graph g;
  Var ci = *g.sch[g.c].LeafAxis(0);
  auto parts = g.sch[g.c].Split(ci, 4);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE(g.sch[g.b].ComputeAt(g.sch[g.c], parts->first).ok());
  ASSERT_TRUE(g.sch[g.c].Unroll(parts->second).ok());  // annotations afterwards are fine
  ASSERT_TRUE(Lower("f", {g.a, g.c, g.s}, g.sch, Target::X86()).ok());
  ASSERT_TRUE(g.sch[g.c].Reorder({parts->second, parts->first}).ok());
  auto f = Lower("f", {g.a, g.c, g.s}, g.sch, Target::X86());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            "stage C's loops changed after stage B was computed at its loop i_outer; schedule "
            "the consumer's loops before compute_at");
}

TEST(ScheduleErrors2, AttachLoopSplitAwayAfterComputeAt) {
  Graph g;
  Var ci = *g.sch[g.c].LeafAxis(0);
  ASSERT_TRUE(g.sch[g.b].ComputeAt(g.sch[g.c], ci).ok());
  ASSERT_TRUE(g.sch[g.c].Split(ci, 4).ok());
  auto f = Lower("f", {g.a, g.c, g.s}, g.sch, Target::X86());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            "function f: stage B is computed at loop i of stage C, which was split, fused or "
            "inlined away afterwards; schedule the consumer's loops before compute_at");
}

TEST(ScheduleErrors2, CacheReadWithAnUnknownScope) {
  Graph g;
  EXPECT_EQ(g.sch.CacheRead(g.a, "texture", {g.b}).status().message(),
            "cache_read of A: unknown scope 'texture'; the scopes are \"shared\" and \"local\"");
  EXPECT_EQ(g.sch.CacheRead(g.a, "shared", {g.c}).status().message(),
            "cache_read of A: stage C does not read A");
  EXPECT_EQ(g.sch.CacheWrite(g.c, "global").status().message(),
            "cache_write of C: unknown scope 'global'; the scopes are \"shared\" and \"local\"");
}

TEST(ScheduleErrors2, CacheWriteOfAScheduledStage) {
  Graph g;
  ASSERT_TRUE(g.sch[g.c].Split(*g.sch[g.c].LeafAxis(0), 4).ok());
  EXPECT_EQ(g.sch.CacheWrite(g.c, "local").status().message(),
            "cache_write of C: call it before scheduling the stage");
}

TEST(ScheduleErrors2, ReverseComputeInlineNeedsOneElementwiseProducer) {
  Graph g;
  Tensor d = Compute(
      {Expr(16)}, [&](const std::vector<Expr>& i) { return g.b(i[0]) + g.c(i[0]); }, "D");
  Tensor e = Compute(
      {Expr(8)}, [&](const std::vector<Expr>& i) { return g.b(i[0] * 2); }, "E");
  Tensor r = Compute(
      {Expr(1)}, [&](const std::vector<Expr>& i) { return g.s(i[0]) * 2.0f; }, "R");
  Schedule sch = Schedule::Create({d, e, r});
  EXPECT_EQ(sch[d].ReverseComputeInline().message(),
            "reverse_compute_inline of stage D: it reads 2 computed tensors (B, C); it needs "
            "exactly one producer");
  EXPECT_EQ(sch[r].ReverseComputeInline().message(),
            "reverse_compute_inline of stage R: its producer S is a reduction, whose value is "
            "incomplete when it is stored");
  EXPECT_EQ(
      sch[e].ReverseComputeInline().message(),
      "reverse_compute_inline of stage E: its producer B has extent 16 in dimension 0, not 8");
  EXPECT_EQ(sch[g.c].ReverseComputeInline().message(),
            "reverse_compute_inline of stage C: its producer B is also read by D, E");
  EXPECT_EQ(sch[g.s].ReverseComputeInline().message(),
            "reverse_compute_inline of stage S: it is a reduction, not elementwise");
}

TEST(ScheduleErrors2, ReverseComputeInlineOfAStridedRead) {
  Tensor a = Placeholder("A", Float(32), {Expr(16)});
  Tensor b = Compute(
      {Expr(16)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f; }, "B");
  Tensor c = Compute(
      {Expr(16)}, [&](const std::vector<Expr>& i) { return b(15 - i[0]); }, "C");
  Schedule sch = Schedule::Create({c});
  EXPECT_EQ(sch[c].ReverseComputeInline().message(),
            "reverse_compute_inline of stage C: it reads B[(15 - i)], not only the element at its "
            "own index [i]");
}

TEST(ScheduleErrors2, InlinedTensorListedAsAnArgument) {
  Graph g;
  ASSERT_TRUE(g.sch[g.b].ComputeInline().ok());
  auto f = Lower("f", {g.a, g.b, g.c, g.s}, g.sch, Target::X86());
  EXPECT_EQ(f.status().message(),
            "function f: tensor B is an argument but is inlined, so it is never stored");
}

TEST(ScheduleErrors2, StorageAlignOfATopLevelStage) {
  Graph g;
  EXPECT_EQ(g.sch[g.b].StorageAlign(0, 32, 1).message(),
            "storage_align of stage B: the stage is not computed at a consumer's loop; only "
            "region buffers are padded");
}

TEST(ScheduleErrors2, RfactorOfANonSplitAxis) {
  Graph g;
  EXPECT_EQ(g.sch.Rfactor(g.s, g.k.var).status().message(),
            "rfactor of S: axis k is not one half of a split of a reduce axis; its loops are i, k");
  EXPECT_EQ(g.sch.Rfactor(g.c, *g.sch[g.c].LeafAxis(0)).status().message(),
            "rfactor of C: it is not a reduction");
}

}  // namespace
}  // namespace cinn_like::ir
