/// \file Schedule primitives: what they build, and the messages of their misuse errors.
#include "ir/schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/lower_stage.h"
#include "ir/printer.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

struct AddFixture {
  Var n{"n"};
  Tensor a = Placeholder("A", Float(32), {n, Expr(128)});
  Tensor c = Compute(
      {n, Expr(128)}, [&](const std::vector<Expr>& i) { return a(i[0], i[1]) + 1.0f; }, "C");
  Schedule sch = Schedule::Create({c});
  Stage& s = sch[c];
  Var i = *s.LeafAxis(0);
  Var j = *s.LeafAxis(1);
};

TEST(Schedule, SplitByNPartsAndFuse) {
  AddFixture f;
  auto parts = f.s.SplitNParts(f.j, 4);
  ASSERT_TRUE(parts.ok()) << parts.status();
  auto fused = f.s.Fuse(parts->first, parts->second);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(f.s.LeafNames(), "i, j_outer_j_inner_fused");
  auto nest = LowerStage(f.s);
  ASSERT_TRUE(nest.ok());
  std::string ir = ToString(*nest);
  EXPECT_THAT(ir, HasSubstr("for (j_outer_j_inner_fused, 0, 128) {"));
  EXPECT_THAT(ir,
              HasSubstr("(((j_outer_j_inner_fused / 32) * 32) + (j_outer_j_inner_fused % 32))"));
}

TEST(Schedule, SplitOfAnAxisNotInTheStage) {
  AddFixture f;
  Var other("q");
  auto r = f.s.Split(other, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "split on stage C: axis q is not an axis of this stage; its loops are i, j");
  ASSERT_TRUE(f.s.Split(f.i, 4).ok());
  auto again = f.s.Split(f.i, 2);
  EXPECT_THAT(again.status().message(), HasSubstr("axis i was already split or fused away"));
}

TEST(Schedule, BadFactorAndLevel) {
  AddFixture f;
  EXPECT_THAT(f.s.Split(f.i, 0).status().message(),
              HasSubstr("split on stage C: axis i needs a positive amount, got 0"));
  EXPECT_THAT(f.s.LeafAxis(5).status().message(),
              HasSubstr("stage C has no loop level 5; its loops are i, j"));
}

TEST(Schedule, BindingOneThreadAxisTwice) {
  AddFixture f;
  ASSERT_TRUE(f.s.Bind(f.i, "threadIdx.x").ok());
  absl::Status st = f.s.Bind(f.j, "threadIdx.x");
  EXPECT_EQ(st.message(), "bind on stage C: threadIdx.x is already bound to axis i");
  EXPECT_THAT(f.s.Bind(f.j, "warp.x").message(),
              HasSubstr("'warp.x' is not blockIdx.x/y/z or threadIdx.x/y/z"));
}

TEST(Schedule, VectorizingANonConstantExtent) {
  AddFixture f;
  absl::Status st = f.s.Vectorize(f.i);
  EXPECT_EQ(st.message(),
            "vectorize on stage C: axis i has extent n, not a constant; split it by a constant "
            "factor first");
  EXPECT_TRUE(f.s.Vectorize(f.j, 8).ok());
}

TEST(Schedule, FuseNeedsAdjacentLoopsAndReorderRejectsDuplicates) {
  AddFixture f;
  auto tiles = f.s.Tile(f.i, f.j, 4, 8);
  ASSERT_TRUE(tiles.ok());
  EXPECT_THAT(f.s.Fuse((*tiles)[0], (*tiles)[2]).status().message(),
              HasSubstr("fuse on stage C: i_outer must directly enclose i_inner"));
  EXPECT_THAT(f.s.Reorder({(*tiles)[0], (*tiles)[0]}).message(),
              HasSubstr("axis i_outer is listed twice"));
}

TEST(Schedule, ReduceAxisIsNeitherParallelNorBoundBeyondThreadIdxX) {
  Var n("n");
  Tensor a = Placeholder("A", Float(32), {n});
  IterVar k = ReduceAxis(n, "k");
  Tensor b = Compute(
      {Expr(1)}, [&](const std::vector<Expr>&) { return ReduceSum(a(k.var), {k}); }, "B");
  auto sch = Schedule::Create({b});
  EXPECT_THAT(sch[b].Parallel(k.var).message(), HasSubstr("k is a reduce axis"));
  EXPECT_THAT(sch[b].Bind(k.var, "blockIdx.x").message(),
              HasSubstr("axis k is a reduce axis; only threadIdx.x can run a reduction across "
                        "threads, not blockIdx.x"));
  EXPECT_THAT(sch[b].Bind(k.var, "threadIdx.y").message(), HasSubstr("not threadIdx.y"));
  EXPECT_TRUE(sch[b].Bind(k.var, "threadIdx.x").ok());
}

}  // namespace
}  // namespace cinn_like::ir
