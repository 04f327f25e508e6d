/// \file One fusion group as a graph of its own (hlir/pass/group_graph.h): its inputs and
/// outputs, and structural keys that ignore names and tell different structures apart.
#include "hlir/pass/group_graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/net_builder.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

using frontend::NetBuilder;

/// softmax(x + y) then a column sum of it: the column sum cannot join the softmax's group, so
/// the program has two groups and the softmax's result crosses between them.
absl::StatusOr<hlir::FusedGraph> TwoGroups(const std::string& prefix, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({8, cols}), prefix + "x");
  auto y = b.CreateInput(DType::kFloat32, S({8, cols}), prefix + "y");
  auto s = b.Softmax(b.Add(x, y));
  b.MarkOutput(b.ReduceSum(s, {0}));
  auto program = b.Build();
  if (!program.ok()) return program.status();
  auto graph = frontend::BuildGraph(*program);
  if (!graph.ok()) return graph.status();
  return hlir::RunGraphPasses(*graph, hlir::TargetPassOptions(ir::Target::X86(), "groups"));
}

TEST(GroupGraph, AGroupReadsWhatItDoesNotMakeAndWritesWhatLeavesIt) {
  auto fused = TwoGroups("", 64);
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_EQ(fused->groups.size(), 2u);
  auto first = hlir::GroupGraph(*fused, 0);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->graph.inputs().size(), 2u);   // x and y
  EXPECT_EQ(first->graph.outputs().size(), 1u);  // the softmax, read by the other group
  EXPECT_EQ(first->groups.size(), 1u);
  EXPECT_EQ(first->graph.nodes().size(), fused->groups[0].nodes.size());
  auto second = hlir::GroupGraph(*fused, 1);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->graph.inputs().size(), 1u);  // the softmax
  ASSERT_EQ(second->graph.outputs().size(), 1u);
  EXPECT_EQ(second->graph.values()[second->graph.outputs()[0]].desc.shape, S({64}));
  EXPECT_FALSE(hlir::GroupGraph(*fused, 2).ok());
}

TEST(GroupGraph, StructuralKeysIgnoreNamesOnly) {
  auto a = TwoGroups("a_", 64), b = TwoGroups("b_", 64), c = TwoGroups("a_", 128);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto key = [](const hlir::FusedGraph& f, int g) {
    return hlir::StructuralKey(*hlir::GroupGraph(f, g));
  };
  EXPECT_EQ(key(*a, 0), key(*b, 0));
  EXPECT_EQ(key(*a, 1), key(*b, 1));
  EXPECT_NE(key(*a, 0), key(*a, 1));
  EXPECT_NE(key(*a, 0), key(*c, 0));  // another shape
}

// Two batch_norms share one epsilon after simplification and CSE: a rank-0 value made in one
// group and read in the other, which no function argument can carry. Every group compiles alone.
TEST(GroupGraph, RankZeroValuesFromOtherGroupsAreCopiedIn) {
  NetBuilder b;
  for (const char* prefix : {"a", "b"}) {
    auto x = b.CreateInput(DType::kFloat32, S({2, 8, 4, 4}), std::string(prefix) + "x");
    std::vector<decltype(x)> p;
    for (const char* name : {"scale", "bias", "mean", "var"}) {
      p.push_back(b.CreateInput(DType::kFloat32, S({8}), std::string(prefix) + name));
    }
    b.MarkOutput(b.ReduceMean(b.Relu(b.BatchNorm(x, p[0], p[1], p[2], p[3])), {2, 3}));
  }
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  auto graph = frontend::BuildGraph(*program);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::Target target = ir::Target::X86();
  auto fused = hlir::RunGraphPasses(*graph, hlir::TargetPassOptions(target, "bn"));
  ASSERT_TRUE(fused.ok()) << fused.status();
  bool crossed = false;  // some group reads a rank-0 value another makes
  for (size_t g = 0; g < fused->groups.size(); ++g) {
    for (int n : fused->groups[g].nodes) {
      for (int v : fused->graph.nodes()[n].inputs) {
        const int p = fused->graph.values()[v].producer;
        if (p < 0 || !fused->graph.values()[v].desc.shape.empty()) continue;
        const auto& own = fused->groups[g].nodes;
        crossed |= std::find(own.begin(), own.end(), p) == own.end();
      }
    }
  }
  EXPECT_TRUE(crossed) << "the case no longer makes a rank-0 value cross groups";
  for (size_t g = 0; g < fused->groups.size(); ++g) {
    auto one = hlir::GroupGraph(*fused, static_cast<int>(g));
    ASSERT_TRUE(one.ok()) << one.status();
    for (int v : one->graph.inputs()) EXPECT_FALSE(one->graph.values()[v].desc.shape.empty());
    auto module = hlir::CompileFusedGraph(*one, target, "group" + std::to_string(g));
    EXPECT_TRUE(module.ok()) << module.status();
  }
}

}  // namespace
}  // namespace cinn_like::testing
