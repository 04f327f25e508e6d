/// \file Lowering of the seed schedules: each lowers to the loop nest its schedule promises.
#include "ir/lower.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "tools/examples.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string LowerExample(const std::string& name, const Target& target) {
  auto ex = examples::Find(name);
  EXPECT_TRUE(ex.ok()) << ex.status();
  auto f = ex->build(target);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? ToString((*f)->body) : "";
}

TEST(Lower, VectorAddSplitBy64IsPartitionedIntoAGuardFreeMainLoopAndAGuardedTail) {
  EXPECT_EQ(LowerExample("myadd", Target::X86()),
            "for (i_outer, 0, (n / 64)) {\n"
            "  for (i_inner, 0, 64) {\n"
            "    C[((i_outer * 64) + i_inner)] = (A[((i_outer * 64) + i_inner)] + "
            "B[((i_outer * 64) + i_inner)])\n"
            "  }\n"
            "}\n"
            "for (i_outer, (n / 64), (((n + 63) / 64) - (n / 64))) {\n"
            "  for (i_inner, 0, 64) {\n"
            "    if ((((i_outer * 64) + i_inner) < n)) {\n"
            "      C[((i_outer * 64) + i_inner)] = (A[((i_outer * 64) + i_inner)] + "
            "B[((i_outer * 64) + i_inner)])\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(Lower, VectorAddBoundToBlocksAndThreadsOnNvgpu) {
  auto f = examples::Find("myadd")->build(Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  std::string ir = ToString(**f);  // the host entry, then its kernel (split_host_device)
  // The block's offset is computed once per block (hoist_common_index runs for NVGPU).
  EXPECT_THAT(ir, HasSubstr("blockIdx.x for (i_outer, 0, ((n + 63) / 64)) {\n"
                            "  let idx0 = (i_outer * 64)\n"
                            "  threadIdx.x for (i_inner, 0, 64) {\n"
                            "    if (((idx0 + i_inner) < n)) {"));
}

TEST(Lower, SumReductionSplitBy32InitializesBeforeThePartitionedReduceLoops) {
  // The reduce loop in blocks of 128 x 32 elements (BlockReductions), the rest summed apart too
  // (B_tail), the blocks' loop and the rest each split into a guard-free part and a guarded
  // tail (partition_loops).
  EXPECT_EQ(
      LowerExample("sum_reduce", Target::X86()),
      "B[0] = 0.0f\n"
      "for (k_outer_block, 0, min((((n + 31) / 32) / 128), (n / 4096))) {\n"
      "  allocate B_block[float32 * 1] in local\n"
      "  B_block[0] = 0.0f\n"
      "  for (k_outer_in_block, 0, 128) {\n"
      "    for (k_inner, 0, 32) {\n"
      "      B_block[0] = (B_block[0] + A[((((k_outer_block * 128) + k_outer_in_block) * 32) + "
      "k_inner)])\n"
      "    }\n"
      "  }\n"
      "  B[0] = (B[0] + B_block[0])\n"
      "}\n"
      "for (k_outer_block, min((((n + 31) / 32) / 128), (n / 4096)), ((((n + 31) / 32) / 128) -"
      " min((((n + 31) / 32) / 128), (n / 4096)))) {\n"
      "  allocate B_block[float32 * 1] in local\n"
      "  B_block[0] = 0.0f\n"
      "  for (k_outer_in_block, 0, 128) {\n"
      "    for (k_inner, 0, 32) {\n"
      "      if ((((((k_outer_block * 128) + k_outer_in_block) * 32) + k_inner) < n)) {\n"
      "        B_block[0] = (B_block[0] + A[((((k_outer_block * 128) + k_outer_in_block) * 32) "
      "+ k_inner)])\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "  B[0] = (B[0] + B_block[0])\n"
      "}\n"
      "allocate B_tail[float32 * 1] in local\n"
      "B_tail[0] = 0.0f\n"
      "for (k_outer, ((((n + 31) / 32) / 128) * 128), min((((n + 31) / 32) - ((((n + 31) / 32) "
      "/ 128) * 128)), max(((n / 32) - ((((n + 31) / 32) / 128) * 128)), 0))) {\n"
      "  for (k_inner, 0, 32) {\n"
      "    B_tail[0] = (B_tail[0] + A[((k_outer * 32) + k_inner)])\n"
      "  }\n"
      "}\n"
      "for (k_outer, (((((n + 31) / 32) / 128) * 128) + min((((n + 31) / 32) - ((((n + 31) / 32"
      ") / 128) * 128)), max(((n / 32) - ((((n + 31) / 32) / 128) * 128)), 0))), ((((n + 31) / "
      "32) - ((((n + 31) / 32) / 128) * 128)) - min((((n + 31) / 32) - ((((n + 31) / 32) / 128)"
      " * 128)), max(((n / 32) - ((((n + 31) / 32) / 128) * 128)), 0)))) {\n"
      "  for (k_inner, 0, 32) {\n"
      "    if ((((k_outer * 32) + k_inner) < n)) {\n"
      "      B_tail[0] = (B_tail[0] + A[((k_outer * 32) + k_inner)])\n"
      "    }\n"
      "  }\n"
      "}\n"
      "B[0] = (B[0] + B_tail[0])\n");
}

TEST(Lower, Add2DReorderPutsColumnsOutside) {
  EXPECT_EQ(LowerExample("add2d_reorder", Target::X86()),
            "for (j, 0, 64) {\n"
            "  for (i, 0, m) {\n"
            "    C[((i * 64) + j)] = (A[((i * 64) + j)] + B[((i * 64) + j)])\n"
            "  }\n"
            "}\n");
}

TEST(Lower, TiledMatmulHasTilesThenReductionThenPointsAndNoGuards) {
  std::string ir = LowerExample("matmul_tiled", Target::X86());
  // Tile loops, the init nest over the points, then k between tiles and points.
  EXPECT_THAT(ir, HasSubstr("for (i_outer, 0, 32) {\n"
                            "  for (j_outer, 0, 32) {\n"
                            "    for (i_inner, 0, 32) {\n"
                            "      for (j_inner, 0, 32) {\n"
                            "        C[((((i_outer * 32) + i_inner) * 1024) + ((j_outer * 32) + "
                            "j_inner))] = 0.0f\n"));
  EXPECT_THAT(ir, HasSubstr("    for (k, 0, 1024) {\n"
                            "      for (i_inner, 0, 32) {\n"
                            "        for (j_inner, 0, 32) {\n"));
  EXPECT_THAT(ir, Not(HasSubstr("if (")));  // 1024 divides by 32: no tail guards
}

TEST(Lower, VectorizedTiledAddUsesRampsOfEightLanes) {
  std::string ir = LowerExample("add_vectorized", Target::X86());
  // The rows split by 16 are partitioned: guard-free main loop, guarded tail.
  EXPECT_THAT(ir, HasSubstr("for (i_outer, 0, (m / 16)) {\n"
                            "  for (j_outer, 0, 4) {\n"
                            "    for (i_inner, 0, 16) {\n"
                            "      for (j_inner_outer, 0, 8) {\n"));
  EXPECT_THAT(ir, HasSubstr("C[ramp(((((i_outer * 16) + i_inner) * 256) + ((j_outer * 64) + "
                            "(j_inner_outer * 8))), 1, 8)] = (A[ramp("));
  EXPECT_THAT(ir, HasSubstr("for (i_outer, (m / 16), (((m + 15) / 16) - (m / 16))) {\n"));
  EXPECT_THAT(ir, Not(HasSubstr("j_inner_inner")));  // the vectorized loop is gone
}

TEST(Lower, MissingArgumentIsAnError) {
  Var n("n");
  Tensor a = Placeholder("A", Float(32), {n});
  Tensor c = Compute(
      {n}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f; }, "C");
  auto sch = Schedule::Create({c});
  auto f = Lower("scale", {c}, sch, Target::X86());
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(
      f.status().message(),
      HasSubstr("function scale: tensor A is read but is neither an argument nor computed"));
}

TEST(Lower, IntermediateTensorIsAllocatedOnBothTargets) {
  Var n("n");
  Tensor a = Placeholder("A", Float(32), {n});
  Tensor t = Compute(
      {n}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f; }, "T");
  Tensor c = Compute(
      {n}, [&](const std::vector<Expr>& i) { return t(i[0]) + 1.0f; }, "C");
  auto sch = Schedule::Create({c});
  auto f = Lower("chain", {a, c}, sch, Target::X86());
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(ToString((*f)->body), HasSubstr("allocate T[float32 * n] in global"));
  // On NVGPU too: a global buffer the host allocates around the kernels (split_host_device).
  for (const Tensor& x : {t, c}) {
    Stage& s = sch[x];
    ASSERT_TRUE(s.Bind(*s.LeafAxis(0), "threadIdx.x").ok());
  }
  auto g = Lower("chain", {a, c}, sch, Target::NVGPU(90));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(ToString((*g)->body), HasSubstr("allocate T[float32 * n] in global"));
}

}  // namespace
}  // namespace cinn_like::ir
