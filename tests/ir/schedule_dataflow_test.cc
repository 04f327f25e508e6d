/// \file The dataflow schedule primitives (compute_inline, reverse_compute_inline, compute_at,
/// cache_read, cache_write, storage_align, rfactor) and InsertSync: the loop nests they lower to.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "ir/lower.h"
#include "ir/printer.h"
#include "ir/schedule.h"
#include "ir/transforms/insert_sync.h"
#include "tools/examples.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

std::string LowerToText(const std::string& name, const std::vector<Tensor>& args,
                        const Schedule& sch, const Target& target = Target::X86()) {
  auto f = Lower(name, args, sch, target);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? ToString((*f)->body) : "";
}

/// B = A * 2, C = B + 1 over 16 elements.
struct Chain {
  Tensor a = Placeholder("A", Float(32), {Expr(16)});
  Tensor b = Compute(
      {Expr(16)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f; }, "B");
  Tensor c = Compute(
      {Expr(16)}, [&](const std::vector<Expr>& i) { return b(i[0]) + 1.0f; }, "C");
  Schedule sch = Schedule::Create({c});
};

TEST(ScheduleDataflow, ComputeInlineReplacesTheLoadByTheBody) {
  Chain t;
  ASSERT_TRUE(t.sch[t.b].ComputeInline().ok());
  EXPECT_EQ(LowerToText("f", {t.a, t.c}, t.sch),
            "for (i, 0, 16) {\n"
            "  C[i] = ((A[i] * 2.0f) + 1.0f)\n"
            "}\n");
}

TEST(ScheduleDataflow, InlinedBodyReadsAnswersAsTheInlinedBodysLoads) {
  // A diamond through two inlined stages: D = B + C, B = A * 2, C = A + E (E an input), and
  // F = D * B. Whether a stage's inlined body loads a buffer, asked without building it, is
  // what building it shows, for every stage and buffer, before and after the inlining.
  Tensor a = Placeholder("A", Float(32), {Expr(16)});
  Tensor e = Placeholder("E", Float(32), {Expr(16)});
  auto elementwise = [](const std::string& name, std::function<Expr(const Expr&)> f) {
    return Compute(
        {Expr(16)}, [&](const std::vector<Expr>& i) { return f(i[0]); }, name);
  };
  Tensor b = elementwise("B", [&](const Expr& i) { return a(i) * 2.0f; });
  Tensor c = elementwise("C", [&](const Expr& i) { return a(i) + e(i); });
  Tensor d = elementwise("D", [&](const Expr& i) { return b(i) + c(i); });
  Tensor f = elementwise("F", [&](const Expr& i) { return d(i) * b(i); });
  Schedule sch = Schedule::Create({f});
  auto check = [&](const std::string& when) {
    for (const Tensor& reader : {b, c, d, f}) {
      const Expr inlined = sch[reader].InlinedBody();
      for (const Tensor& t : {a, b, c, d, e, f}) {
        const bool loads = ToString(inlined).find(t.name() + "[") != std::string::npos;
        EXPECT_EQ(sch[reader].InlinedBodyReads(t->buffer.get()), loads)
            << when << ": " << reader.name() << " reading " << t.name() << " in "
            << ToString(inlined);
      }
    }
  };
  check("nothing inlined");
  ASSERT_TRUE(sch[b].ComputeInline().ok());
  check("B inlined");
  ASSERT_TRUE(sch[c].ComputeInline().ok());
  ASSERT_TRUE(sch[d].ComputeInline().ok());
  check("B, C and D inlined");
  EXPECT_TRUE(sch[f].InlinedBodyReads(e->buffer.get()));
  EXPECT_FALSE(sch[f].InlinedBodyReads(d->buffer.get()));
}

TEST(ScheduleDataflow, ReverseComputeInlineStoresTheConsumerValueFromTheProducerNest) {
  Chain t;
  ASSERT_TRUE(t.sch[t.c].ReverseComputeInline().ok());
  EXPECT_EQ(LowerToText("f", {t.a, t.c}, t.sch),
            "for (i, 0, 16) {\n"
            "  C[i] = ((A[i] * 2.0f) + 1.0f)\n"
            "}\n");
}

TEST(ScheduleDataflow, ComputeAtComputesTheWindowOfOneOuterIteration) {
  // C[i] = B[i] + B[i + 1]: each 8-wide tile of C needs 9 elements of B.
  Tensor a = Placeholder("A", Float(32), {Expr(65)});
  Tensor b = Compute(
      {Expr(65)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f; }, "B");
  Tensor c = Compute(
      {Expr(64)}, [&](const std::vector<Expr>& i) { return b(i[0]) + b(i[0] + 1); }, "C");
  Schedule sch = Schedule::Create({c});
  auto parts = sch[c].Split(*sch[c].LeafAxis(0), 8);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE(sch[b].ComputeAt(sch[c], parts->first).ok());
  EXPECT_EQ(sch[b].LeafNames(), "B_i");
  EXPECT_EQ(LowerToText("f", {a, c}, sch),
            "for (i_outer, 0, 8) {\n"
            "  allocate B[float32 * 9] in local\n"
            "  for (B_i, 0, 9) {\n"
            "    B[B_i] = (A[((i_outer * 8) + B_i)] * 2.0f)\n"
            "  }\n"
            "  for (i_inner, 0, 8) {\n"
            "    C[((i_outer * 8) + i_inner)] = (B[i_inner] + B[(i_inner + 1)])\n"
            "  }\n"
            "}\n");
}

TEST(ScheduleDataflow, ComputeAtAStridedLoopKeepsOnlyTheTouchedElements) {
  // Inside i_inner, C walks i = i_outer * 8 + i_inner over i_outer: every 8th element of B.
  Tensor a = Placeholder("A", Float(32), {Expr(32)});
  Tensor b = Compute(
      {Expr(32)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f; }, "B");
  Tensor c = Compute(
      {Expr(32)}, [&](const std::vector<Expr>& i) { return b(i[0]) + 1.0f; }, "C");
  Schedule sch = Schedule::Create({c});
  auto parts = sch[c].Split(*sch[c].LeafAxis(0), 8);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE(sch[c].Reorder({parts->second, parts->first}).ok());
  ASSERT_TRUE(sch[b].ComputeAt(sch[c], parts->second).ok());
  EXPECT_EQ(LowerToText("f", {a, c}, sch),
            "for (i_inner, 0, 8) {\n"
            "  allocate B[float32 * 4] in local\n"
            "  for (B_i, 0, 4) {\n"
            "    B[B_i] = (A[(i_inner + (B_i * 8))] * 2.0f)\n"
            "  }\n"
            "  for (i_outer, 0, 4) {\n"
            "    C[((i_outer * 8) + i_inner)] = (B[i_outer] + 1.0f)\n"
            "  }\n"
            "}\n");
}

/// C = A x B for 32 x 32 x 32.
struct Matmul {
  Expr n{32};
  Tensor a = Placeholder("A", Float(32), {n, n});
  Tensor b = Placeholder("B", Float(32), {n, n});
  IterVar k = ReduceAxis(n, "k");
  Tensor c = Compute(
      {n, n},
      [&](const std::vector<Expr>& i) { return ReduceSum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  Schedule sch = Schedule::Create({c});
};

TEST(ScheduleDataflow, CacheWriteComputesIntoTheCacheThenCopiesOut) {
  Matmul m;
  auto local = m.sch.CacheWrite(m.c, "local");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ((*local)->buffer->scope, MemoryScope::kLocal);
  Stage& sc = m.sch[m.c];
  auto parts = sc.Split(*sc.LeafAxis(0), 4);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE(m.sch[*local].ComputeAt(sc, parts->first).ok());
  std::string ir = LowerToText("f", {m.a, m.b, m.c}, m.sch);
  EXPECT_EQ(ir,
            "for (i_outer, 0, 8) {\n"
            "  allocate C_local[float32 * 4 * 32] in local\n"
            "  for (C_local_i, 0, 4) {\n"
            "    for (C_local_j, 0, 32) {\n"
            "      C_local[((C_local_i * 32) + C_local_j)] = 0.0f\n"
            "      for (C_local_k, 0, 32) {\n"
            "        C_local[((C_local_i * 32) + C_local_j)] = (C_local[((C_local_i * 32) + "
            "C_local_j)] + (A[((((i_outer * 4) + C_local_i) * 32) + C_local_k)] * "
            "B[((C_local_k * 32) + C_local_j)]))\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "  for (i_inner, 0, 4) {\n"
            "    for (j, 0, 32) {\n"
            "      C[((((i_outer * 4) + i_inner) * 32) + j)] = C_local[((i_inner * 32) + j)]\n"
            "    }\n"
            "  }\n"
            "}\n");
}

/// Matmul with A staged per (4-row, 8-k) tile: C tiled 4x4, k split by 8, A_shared at k_outer.
struct StagedMatmul : Matmul {
  Tensor a_shared;
  StagedMatmul() {
    a_shared = *sch.CacheRead(a, "shared", {c});
    Stage& sc = sch[c];
    auto tiles = *sc.Tile(*sc.LeafAxis(0), *sc.LeafAxis(1), 4, 4);
    auto ks = *sc.Split(*sc.LeafAxis(4), 8);
    EXPECT_TRUE(sc.Reorder({tiles[0], tiles[1], ks.first, tiles[2], tiles[3], ks.second}).ok());
    absl::Status st = sch[a_shared].ComputeAt(sc, ks.first);
    EXPECT_TRUE(st.ok()) << st;
  }
};

TEST(ScheduleDataflow, CacheReadAtTheKOuterLoopStagesOneTile) {
  StagedMatmul m;
  std::string ir = LowerToText("f", {m.a, m.b, m.c}, m.sch);
  EXPECT_THAT(
      ir, HasSubstr("    for (k_outer, 0, 4) {\n"
                    "      allocate A_shared[float32 * 4 * 8] in shared\n"
                    "      for (A_shared_i, 0, 4) {\n"
                    "        for (A_shared_j, 0, 8) {\n"
                    "          A_shared[((A_shared_i * 8) + A_shared_j)] = "
                    "A[((((i_outer * 4) + A_shared_i) * 32) + ((k_outer * 8) + A_shared_j))]\n"));
  EXPECT_THAT(ir, HasSubstr("(A_shared[((i_inner * 8) + k_inner)] * "
                            "B[((((k_outer * 8) + k_inner) * 32) + ((j_outer * 4) + j_inner))])"));
}

TEST(ScheduleDataflow, StorageAlignPadsTheRowStride) {
  StagedMatmul m;
  ASSERT_TRUE(m.sch[m.a_shared].StorageAlign(0, 32, 1).ok());
  std::string ir = LowerToText("f", {m.a, m.b, m.c}, m.sch);
  EXPECT_THAT(ir, HasSubstr("allocate A_shared[float32 * 4 * 33] in shared\n"));
  EXPECT_THAT(ir, HasSubstr("A_shared[((A_shared_i * 33) + A_shared_j)] = "));
  EXPECT_THAT(ir, HasSubstr("(A_shared[((i_inner * 33) + k_inner)] * "));
}

TEST(ScheduleDataflow, RfactorReducesPartialsThenThePartials) {
  Tensor a = Placeholder("A", Float(32), {Expr(64)});
  IterVar k = ReduceAxis(Expr(64), "k");
  Tensor b = Compute(
      {Expr(1)}, [&](const std::vector<Expr>&) { return ReduceSum(a(k.var), {k}); }, "B");
  Schedule sch = Schedule::Create({b});
  auto ks = sch[b].Split(k.var, 8);
  ASSERT_TRUE(ks.ok());
  auto rf = sch.Rfactor(b, ks->second);
  ASSERT_TRUE(rf.ok()) << rf.status();
  EXPECT_EQ(sch[*rf].LeafNames(), "k_inner, i, k_outer");
  EXPECT_EQ(sch[b].LeafNames(), "i, k_inner");
  EXPECT_EQ(LowerToText("f", {a, b}, sch),
            "allocate B_rf[float32 * 8 * 1] in global\n"
            "for (k_inner, 0, 8) {\n"
            "  B_rf[k_inner] = 0.0f\n"
            "  for (k_outer, 0, 8) {\n"
            "    B_rf[k_inner] = (B_rf[k_inner] + A[((k_outer * 8) + k_inner)])\n"
            "  }\n"
            "}\n"
            "B[0] = 0.0f\n"
            "for (k_inner, 0, 8) {\n"
            "  B[0] = (B[0] + B_rf[k_inner])\n"
            "}\n");
}

TEST(ScheduleDataflow, SharedMatmulOnNvgpuSynchronizesAroundEachKSlice) {
  auto f = examples::BuildMatmulShared(Target::NVGPU(90), 64, {32, 4, 8}, "mm");
  ASSERT_TRUE(f.ok()) << f.status();
  std::string ir = ToString(**f);
  // Copies, a barrier, the products, a barrier before the next slice overwrites the tiles.
  size_t loop = ir.find("for (C_local_k_outer, 0, 8) {");
  ASSERT_NE(loop, std::string::npos) << ir;
  size_t first = ir.find("sync_threads()", loop);
  size_t product = ir.find("C_local[0] = (C_local[0] + (A_shared[", loop);
  size_t second = ir.find("sync_threads()", first + 1);
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(ir.rfind("B_shared[", first), first);  // the last copy comes before the barrier
  EXPECT_LT(first, product);
  EXPECT_LT(product, second);
  EXPECT_EQ(ir.find("sync_threads()", second + 1), std::string::npos);
  EXPECT_THAT(ir, HasSubstr("allocate A_shared[float32 * 32 * 8] in shared"));
  EXPECT_THAT(ir, HasSubstr("allocate B_shared[float32 * 8 * 32] in shared"));
  EXPECT_THAT(ir, HasSubstr("allocate C_local[float32 * 4 * 4] in local"));
  EXPECT_THAT(ir, HasSubstr("threadIdx.y for (A_shared_i_A_shared_j_fused_inner_outer, 0, 8)"));
}

TEST(ScheduleDataflow, InsertSyncLeavesUnsharedCodeAlone) {
  Chain t;
  auto f = Lower("f", {t.a, t.b, t.c}, t.sch, Target::X86());
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(InsertSync((*f)->body).same_as((*f)->body));
}

}  // namespace
}  // namespace cinn_like::ir
