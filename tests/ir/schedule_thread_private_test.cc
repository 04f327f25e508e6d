/// \file compute_at with a thread-private region: a row cached in each thread's registers,
/// the loops bound to thread indices inside the attach point (the consumer's, and those of
/// the reductions computed at the same loop) fixed to the thread's index, so the local
/// buffer holds one thread's share of the row, not the row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/lower.h"
#include "ir/math.h"
#include "ir/printer.h"
#include "ir/schedule.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// out[i, j] = x[i, j] - max_k x[i, k] over 4 rows of 16: the row max computed at the row
/// loop, each row over 4 threads of 4 contiguous elements (the consumer's columns and the
/// max's reduce axis alike), and x read into a local buffer at the row.
struct CachedRow {
  CachedRow() {
    x = Placeholder("X", Float(32), {Expr(4), Expr(16)});
    IterVar k = ReduceAxis(Expr(16), "k");
    mx = Compute(
        {Expr(4)}, [&](const std::vector<Expr>& i) { return ReduceMax(x(i[0], k.var), {k}); }, "M");
    out = Compute(
        {Expr(4), Expr(16)}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) - mx(i[0]); },
        "O");
    sch = Schedule::Create({out});
    Stage& o = sch[out];
    row = *o.LeafAxis(0);
    auto cols = o.Split(*o.LeafAxis(1), 4);
    EXPECT_TRUE(o.Bind(row, "blockIdx.x").ok());
    EXPECT_TRUE(o.Bind(cols->first, "threadIdx.x").ok());
    EXPECT_TRUE(sch[mx].ComputeAt(o, row).ok());
    Stage& m = sch[mx];
    auto ks = m.Split(*m.LeafAxis(1), 4);
    EXPECT_TRUE(m.Bind(ks->first, "threadIdx.x").ok());
    local = *sch.CacheRead(x, "local", {mx, out});
  }
  Tensor x, mx, out, local;
  Var row;
  Schedule sch;
};

TEST(ScheduleThreadPrivate, ARowCachedPerThreadHoldsTheThreadsShare) {
  CachedRow t;
  absl::Status st = t.sch[t.local].ComputeAt(t.sch[t.out], t.row, /*thread_private=*/true);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(t.sch[t.local].attach()->extent, (std::vector<int64_t>{1, 4}));
  auto f = Lower("f", {t.x, t.out}, t.sch, Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ((*f)->kernels.size(), 1u);
  std::string text = ToString((*f)->kernels[0]->body);
  // The thread's 4 elements start at its index times 4; the max and the output read them
  // back at offsets 0..3 (their thread variables and the origin's index cancel).
  EXPECT_THAT(text, HasSubstr("allocate X_local[float32 * 1 * 4] in local")) << text;
  EXPECT_THAT(text, HasSubstr("X[(idx0 + ((thread_index(0) * 4) + X_local_j))]")) << text;
  EXPECT_THAT(text, HasSubstr("maximum(M_partial[0], X_local[M_k_inner])")) << text;
  EXPECT_THAT(text, HasSubstr("(X_local[j_inner] - M[0])")) << text;
  EXPECT_THAT(text, Not(HasSubstr("X_local[(("))) << text;  // no thread term in its indices
}

TEST(ScheduleThreadPrivate, WithoutItTheRegionIsTheRow) {
  CachedRow t;
  ASSERT_TRUE(t.sch[t.local].ComputeAt(t.sch[t.out], t.row).ok());
  EXPECT_EQ(t.sch[t.local].attach()->extent, (std::vector<int64_t>{1, 16}));
}

TEST(ScheduleThreadPrivate, ASharedBufferIsNotPrivate) {
  CachedRow t;
  Tensor shared = *t.sch.CacheRead(t.mx, "shared", {t.out});
  absl::Status st = t.sch[shared].ComputeAt(t.sch[t.out], t.row, /*thread_private=*/true);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("a shared buffer is not private to a thread"));
}

}  // namespace
}  // namespace cinn_like::ir
