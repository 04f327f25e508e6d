/// \file compute_at of stages that read each other at one loop of a consumer (a softmax row:
/// the row max read by the row sum and by the output, both computed inside the row's loop),
/// the symbolic loops inside the attach point that no access uses, and the cross-thread
/// reduction of a buffer allocated inside a block loop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/lower.h"
#include "ir/math.h"
#include "ir/printer.h"
#include "ir/schedule.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

/// out[i, j] = exp(x[i, j] - max[i]) / sum[i] over rows of `cols` columns.
struct SoftmaxRows {
  explicit SoftmaxRows(Expr cols) {
    x = Placeholder("X", Float(32), {Expr(4), cols});
    IterVar k = ReduceAxis(cols, "k"), k2 = ReduceAxis(cols, "k2");
    mx = Compute(
        {Expr(4)}, [&](const std::vector<Expr>& i) { return ReduceMax(x(i[0], k.var), {k}); }, "M");
    sum = Compute(
        {Expr(4)},
        [&](const std::vector<Expr>& i) {
          return ReduceSum(Exp(x(i[0], k2.var) - mx(i[0])), {k2});
        },
        "S");
    out = Compute(
        {Expr(4), cols},
        [&](const std::vector<Expr>& i) { return Exp(x(i[0], i[1]) - mx(i[0])) / sum(i[0]); }, "O");
    sch = Schedule::Create({out});
  }
  Tensor x, mx, sum, out;
  Schedule sch;
};

TEST(ScheduleSiblings, AReaderComputedAtTheSameLoopCountsInTheRegion) {
  SoftmaxRows t(Expr(16));
  Var row = *t.sch[t.out].LeafAxis(0);
  ASSERT_TRUE(t.sch[t.sum].ComputeAt(t.sch[t.out], row).ok());
  absl::Status st = t.sch[t.mx].ComputeAt(t.sch[t.out], row);
  ASSERT_TRUE(st.ok()) << st;
  auto f = Lower("f", {t.x, t.out}, t.sch, Target::X86());
  ASSERT_TRUE(f.ok()) << f.status();
  std::string text = ToString((*f)->body);
  // Both rows' reductions live in the row loop; the sum reads the max's one-element region.
  EXPECT_THAT(text, HasSubstr("allocate M[float32 * 1] in local"));
  EXPECT_THAT(text, HasSubstr("allocate S[float32 * 1] in local"));
  EXPECT_THAT(text, HasSubstr("- M[0]"));
}

TEST(ScheduleSiblings, AReaderAttachedElsewhereIsStillAnError) {
  SoftmaxRows t(Expr(16));
  Var row = *t.sch[t.out].LeafAxis(0);
  absl::Status st = t.sch[t.mx].ComputeAt(t.sch[t.out], row);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("M is also read by S"));
}

TEST(ScheduleSiblings, SymbolicLoopsInsideTheAttachPointThatNoAccessUsesAreAccepted) {
  Var m("m");
  SoftmaxRows t(m);
  Var row = *t.sch[t.out].LeafAxis(0);
  auto parts = t.sch[t.out].Split(*t.sch[t.out].LeafAxis(1), 32);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE(t.sch[t.sum].ComputeAt(t.sch[t.out], row).ok());
  absl::Status st = t.sch[t.mx].ComputeAt(t.sch[t.out], row);
  EXPECT_TRUE(st.ok()) << st;
}

TEST(ScheduleSiblings, ABlockReduceIntoARegionBufferStaysInsideTheBlockLoop) {
  SoftmaxRows t(Expr(100));
  Stage& so = t.sch[t.out];
  Var row = *so.LeafAxis(0);
  ASSERT_TRUE(so.Bind(row, "blockIdx.x").ok());
  auto cols = so.Split(*so.LeafAxis(1), 128);
  ASSERT_TRUE(cols.ok());
  ASSERT_TRUE(so.Bind(cols->second, "threadIdx.x").ok());
  for (Tensor r : {t.sum, t.mx}) {
    auto shared = t.sch.CacheWrite(r, "shared");
    ASSERT_TRUE(shared.ok()) << shared.status();
    ASSERT_TRUE(t.sch[r].ComputeInline().ok());
    Stage& c = t.sch[*shared];
    absl::Status st = c.ComputeAt(so, row);
    ASSERT_TRUE(st.ok()) << st;
    auto k = c.Split(*c.LeafAxis(1), 128);
    ASSERT_TRUE(k.ok());
    ASSERT_TRUE(c.Bind(k->second, "threadIdx.x").ok());
  }
  auto f = Lower("f", {t.x, t.out}, t.sch, Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  std::string text = ToString(**f);
  EXPECT_THAT(text, HasSubstr("block_reduce_max("));
  EXPECT_THAT(text, HasSubstr("block_reduce_sum("));
}

}  // namespace
}  // namespace cinn_like::ir
