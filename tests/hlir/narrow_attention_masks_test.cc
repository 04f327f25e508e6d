/// \file NarrowAttentionMasks: a padding mask built as BERT builds it is read as [B, 1, 1, S],
/// its [B, 1, S, S] form no longer computed, with the attention's results unchanged (reference
/// interpreter, and compiled for x86).
#include <gtest/gtest.h>

#include <random>

#include "frontend/program.h"
#include "hlir/pass/dead_code_elimination.h"
#include "hlir/pass/graph_dump.h"
#include "hlir/pass/narrow_attention_masks.h"
#include "hlir/pass/pipeline.h"
#include "hlir/reference_interpreter.h"
#include "tests/attention_cases.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

/// The shape of the mask input of the graph's attention node.
hlir::Shape MaskShape(const hlir::Graph& g) {
  for (const hlir::Node& n : g.nodes()) {
    if (n.op == "attention") return g.values()[n.inputs[3]].desc.shape;
  }
  ADD_FAILURE() << "no attention node";
  return {};
}

/// How many values of `g` have `shape`.
int ValuesOfShape(const hlir::Graph& g, const hlir::Shape& shape) {
  int n = 0;
  for (const hlir::Value& v : g.values()) n += v.desc.shape == shape;
  return n;
}

TEST(NarrowAttentionMasks, APaddingMaskIsReadAsItsKeysTest) {
  auto graph = frontend::BuildGraph(PaddingMaskAttention(2, 24));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(MaskShape(*graph), S({2, 1, 24, 24})) << hlir::GraphToText(*graph);
  auto narrowed = hlir::NarrowAttentionMasks(*graph);
  ASSERT_TRUE(narrowed.ok()) << narrowed.status();
  auto live = hlir::EliminateDeadCode(*narrowed);
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_EQ(MaskShape(*live), S({2, 1, 1, 24})) << hlir::GraphToText(*live);
  EXPECT_EQ(ValuesOfShape(*live, S({2, 1, 24, 24})), 0) << hlir::GraphToText(*live);
  // The broadcast of a value of its own rank takes no node: one reshape (the keys' test's).
  int reshapes = 0;
  for (const hlir::Node& n : live->nodes()) reshapes += n.op == "reshape";
  EXPECT_EQ(reshapes, 1) << hlir::GraphToText(*live);
  // The same results on random inputs (the reference interpreter on both graphs).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<hlir::HostTensor> in;
  for (int v : graph->inputs()) {
    const hlir::TensorDesc& d = graph->values()[v].desc;
    in.emplace_back(d.dtype, Concrete(d.shape));
    for (double& x : in.back().data) x = u(rng);
  }
  auto want = hlir::RunReference(*graph, in);
  auto got = hlir::RunReference(*live, in);
  ASSERT_TRUE(want.ok() && got.ok());
  for (size_t o = 0; o < want->size(); ++o) EXPECT_EQ((*want)[o].data, (*got)[o].data) << o;
}

TEST(NarrowAttentionMasks, AMaskThatVariesOverQueriesStaysWhole) {
  // A [B, 1, S, S] float mask from an input: nothing to narrow, the graph unchanged.
  frontend::NetBuilder b;
  auto q = b.CreateInput(DType::kFloat32, S({2, 4, 8, 16}), "q");
  auto m = b.CreateInput(DType::kFloat32, S({2, 1, 8, 8}), "m");
  auto mask = b.Mul(m, b.Fill({1}, 2.0));
  for (const auto& o : b.Op("attention", {q, q, q, mask}, {})) b.MarkOutput(o);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto narrowed = hlir::NarrowAttentionMasks(*graph);
  ASSERT_TRUE(narrowed.ok()) << narrowed.status();
  EXPECT_EQ(hlir::GraphToText(*narrowed), hlir::GraphToText(*graph));
}

TEST(NarrowAttentionMasks, AMaskWhoseQueriesTestComesFromPositionsNarrowsAtLongSequences) {
  // HF BERT's test of each query: positions (an arange) >= 0, [1, 1, S, 1], all true: at 512
  // tokens above constant folding's element limit, a fill all the same, and the mask narrows.
  const int64_t batch = 2, seq = 512;
  frontend::NetBuilder b;
  auto q = b.CreateInput(DType::kFloat32, S({batch, 2, seq, 16}), "q");
  auto keep = b.CreateInput(DType::kFloat32, S({batch, seq}), "keep");
  auto keys = b.Reshape(b.Greater(keep, b.Fill({1}, -1.5)), {batch, 1, 1, seq});
  auto rows = b.Reshape(b.Arange(0, seq), {1, 1, seq, 1});
  auto queries = b.LogicalAnd(b.Fill({1}, 1.0, DType::kBool),
                              b.GreaterEqual(rows, b.Fill({1}, 0.0, DType::kInt64)));
  auto mask = b.Where(b.BroadcastTo(b.LogicalAnd(queries, keys), {batch, 1, seq, seq}),
                      b.Fill({1}, 0.0), b.Fill({1}, -INFINITY));
  b.MarkOutput(b.Op("attention", {q, q, q, mask}, {})[0]);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto fused = hlir::RunGraphPasses(*graph, hlir::PassOptions{});
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(MaskShape(fused->graph), S({batch, 1, 1, seq})) << hlir::GraphToText(fused->graph);
}

TEST(NarrowAttentionMasks, ThePipelineNarrowsAndTheX86CodeMatchesTheReference) {
  auto graph = frontend::BuildGraph(PaddingMaskAttention(2, 24));
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto fused = hlir::RunGraphPasses(*graph, hlir::PassOptions{});
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(MaskShape(fused->graph), S({2, 1, 1, 24})) << hlir::GraphToText(fused->graph);
  RunProgramCase(PaddingMaskAttention(2, 24), ir::Target::X86(), RunOnX86);
}

}  // namespace
}  // namespace cinn_like::testing
