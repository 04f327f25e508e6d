/// \file The arena plan (backends/llvm/arena_plan.h): workspaces live at different times share
/// bytes, workspaces live together never do, and the arena is the largest live set.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "backends/llvm/arena_plan.h"

namespace cinn_like::backends {
namespace {

ir::Buffer Workspace(const std::string& name, int64_t floats) {
  return ir::MakeBuffer(name, ir::Float(32), {ir::Expr(floats)});
}

/// dst[0] = src[0]: a statement naming both.
ir::Stmt Copy(const ir::Buffer& dst, const ir::Buffer& src) {
  return ir::Store::Make(dst, {ir::Expr(0)}, ir::Load::Make(src, {ir::Expr(0)}));
}

/// `stmts` under an Allocate chain of `buffers` (the first outermost).
ir::Stmt Entry(const std::vector<ir::Buffer>& buffers, std::vector<ir::Stmt> stmts) {
  ir::Stmt body = ir::Block::Make(std::move(stmts));
  for (auto it = buffers.rbegin(); it != buffers.rend(); ++it) {
    body = ir::Allocate::Make(*it, body);
  }
  return body;
}

int64_t BytesOf(const ir::Buffer& b) { return *ir::AsConstInt(b->shape[0]) * 4; }

TEST(ArenaPlan, AChainOfStagesNeedsTwoWorkspacesNotAll) {
  // in -> t0 -> t1 -> t2 -> t3 -> out: at each statement two workspaces are live.
  ir::Buffer in = Workspace("in", 1), out = Workspace("out", 1);  // arguments: not allocated
  std::vector<ir::Buffer> t;
  for (int i = 0; i < 4; ++i) t.push_back(Workspace("t" + std::to_string(i), 1000));
  ir::Stmt body = Entry(
      t, {Copy(t[0], in), Copy(t[1], t[0]), Copy(t[2], t[1]), Copy(t[3], t[2]), Copy(out, t[3])});
  ArenaPlan plan = PlanArena(body, 256, BytesOf);
  ASSERT_EQ(plan.offsets.size(), 4u);
  EXPECT_EQ(plan.bytes, 4096 + 4000);  // two of 4000 bytes, the second at 4096
  EXPECT_NE(plan.offsets[t[0].get()], plan.offsets[t[1].get()]);
  EXPECT_EQ(plan.offsets[t[0].get()], plan.offsets[t[2].get()]);
  for (const auto& [buffer, offset] : plan.offsets) EXPECT_EQ(offset % 256, 0) << buffer->name;
}

TEST(ArenaPlan, BuffersOutsideTheArenaAreLeftOut) {
  ir::Buffer a = Workspace("a", 10), b = Workspace("b", 10);
  ir::Stmt body = Entry({a, b}, {Copy(b, a)});
  ArenaPlan plan = PlanArena(body, 256, [&](const ir::Buffer& x) {
    return x.get() == a.get() ? int64_t{-1} : BytesOf(x);
  });
  EXPECT_EQ(plan.offsets.count(a.get()), 0u);
  EXPECT_EQ(plan.bytes, 40);
}

TEST(ArenaPlan, RandomProgramsNeverShareBytesWhileLive) {
  // Random statements over random workspaces: every pair live at one statement gets disjoint
  // bytes, and the arena is no larger than the sum of the workspaces.
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<ir::Buffer> w;
    const int n = 2 + static_cast<int>(rng() % 12);
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      w.push_back(Workspace("w" + std::to_string(i), 1 + static_cast<int64_t>(rng() % 3000)));
      total += (BytesOf(w.back()) + 255) / 256 * 256;
    }
    std::vector<ir::Stmt> stmts;
    std::vector<std::set<int>> names;
    for (int s = 0; s < 3 + static_cast<int>(rng() % 15); ++s) {
      const int a = static_cast<int>(rng() % n), b = static_cast<int>(rng() % n);
      stmts.push_back(Copy(w[a], w[b]));
      names.push_back({a, b});
    }
    ArenaPlan plan = PlanArena(Entry(w, stmts), 256, BytesOf);
    EXPECT_LE(plan.bytes, total);
    std::vector<int> first(n, -1), last(n, -1);
    for (int s = 0; s < static_cast<int>(names.size()); ++s) {
      for (int i : names[s]) {
        if (first[i] < 0) first[i] = s;
        last[i] = s;
      }
    }
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (first[i] < 0 || first[j] < 0 || last[i] < first[j] || last[j] < first[i]) continue;
        const int64_t oi = plan.offsets[w[i].get()], oj = plan.offsets[w[j].get()];
        EXPECT_TRUE(oi + BytesOf(w[i]) <= oj || oj + BytesOf(w[j]) <= oi)
            << "w" << i << " and w" << j << " are live together and overlap";
        EXPECT_LE(oi + BytesOf(w[i]), plan.bytes);
      }
    }
  }
}

}  // namespace
}  // namespace cinn_like::backends
