/// \file Long float32 sums on x86 (issue 50, class 5): a sum of 2^25 ones is 2^25 as in
/// PyTorch, where one accumulator stops at 2^24 (x + 1 == x past it); long sums of random data
/// still match the reference.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

const ir::Target kX86 = ir::Target::X86();
constexpr int64_t kN = int64_t{1} << 25;

/// Runs `program` on x86 with every input filled with `value`; the first output's elements.
std::vector<double> RunFilled(const Program& program, double value) {
  auto graph = frontend::BuildGraph(program);
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto module = CompileProgramModule(program, kX86, "long_sum");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!graph.ok() || !module.ok()) return {};
  std::vector<std::unique_ptr<TypedTensor>> owned;
  std::vector<TypedTensor*> args;
  for (int v : graph->inputs()) {
    const hlir::Value& in = graph->values()[v];
    owned.push_back(std::make_unique<TypedTensor>(ir::Float(32), Concrete(in.desc.shape)));
    for (int64_t k = 0; k < owned.back()->size(); ++k) owned.back()->Set(k, value);
    args.push_back(owned.back().get());
  }
  const hlir::Value& out = graph->values()[graph->outputs()[0]];
  owned.push_back(std::make_unique<TypedTensor>(ir::Float(32), Concrete(out.desc.shape)));
  args.push_back(owned.back().get());
  RunOnX86(*module, args);
  std::vector<double> got;
  for (int64_t k = 0; k < args.back()->size(); ++k) got.push_back(args.back()->Get(k));
  return got;
}

TEST(LongSumsX86, SumOfABroadcastScalarPastTwoToThe24IsExact) {
  // s.expand(n).sum(): the broadcast is inlined, one scalar loop of 2^25 additions.
  NetBuilder b;
  auto s = b.CreateInput(DType::kFloat32, S({1}), "s");
  b.MarkOutput(b.ReduceSum(b.BroadcastTo(s, {kN}), {0}, /*keepdim=*/true));
  auto got = RunFilled(*b.Build(), 1.0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], static_cast<double>(kN));
}

TEST(LongSumsX86, SumOfATensorOfOnesPastTwoToThe24IsExact) {
  // A real input, reduced in vector partials: each lane alone passes 2^16, not 2^24.
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({kN}), "x");
  b.MarkOutput(b.ReduceSum(x, {0}, /*keepdim=*/true));
  auto got = RunFilled(*b.Build(), 1.0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], static_cast<double>(kN));
}

TEST(LongSumsX86, ColumnSumsOfABroadcastRowPastTwoToThe24AreExact) {
  // Columns streamed with one vector accumulator per chunk of columns: 2^25 rows each.
  NetBuilder b;
  auto row = b.CreateInput(DType::kFloat32, S({1, 16}), "row");
  b.MarkOutput(b.ReduceSum(b.BroadcastTo(row, {kN, 16}), {0}));
  auto got = RunFilled(*b.Build(), 1.0);
  ASSERT_EQ(got.size(), 16u);
  for (double g : got) EXPECT_EQ(g, static_cast<double>(kN));
}

TEST(LongSumsX86, LongSumsOfRandomDataMatchTheReference) {
  // Rows and columns of a few blocks plus a rest, the tails of the vectors included.
  for (auto [shape, axis] : std::vector<std::pair<Shape, int64_t>>{{S({3, 3 * 4096 * 64 + 77}), 1},
                                                                   {S({70001}), 0},
                                                                   {S({9001, 24}), 0},
                                                                   {S({2, 20000, 3}), 1}}) {
    SCOPED_TRACE(hlir::ShapeToString(shape));
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, shape, "x");
    b.MarkOutput(b.ReduceSum(x, {axis}, /*keepdim=*/true));
    RunProgramCase(*b.Build(), kX86, RunOnX86);
  }
}

}  // namespace
}  // namespace cinn_like::testing
