/// \file One fusion group as a graph of its own (hlir/pass/group_graph.h): its inputs and
/// outputs, and structural keys that ignore names and tell different structures apart.
#include "hlir/pass/group_graph.h"

#include <gtest/gtest.h>

#include "frontend/net_builder.h"
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

}  // namespace
}  // namespace cinn_like::testing
