/// \file Attention's operand layouts: FoldLayoutsIntoAttention reads HF's [B, S, H, D] operands
/// where they lie and writes the output transposed (no transpose or repeat_kv expansion left),
/// with the reference's results unchanged; an attention with perms compiled for x86 (the
/// decomposed compute reading through them) against the reference; the perms' checks.
#include <gtest/gtest.h>

#include <random>

#include "frontend/program.h"
#include "hlir/pass/attention_layout.h"
#include "hlir/pass/dead_code_elimination.h"
#include "hlir/pass/graph_dump.h"
#include "hlir/reference_interpreter.h"
#include "tests/attention_cases.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

/// How many nodes of `g` run `op`.
int Count(const hlir::Graph& g, const std::string& op) {
  int n = 0;
  for (const hlir::Node& node : g.nodes()) n += node.op == op;
  return n;
}

/// The attention node of `g`.
const hlir::Node* Attention(const hlir::Graph& g) {
  for (const hlir::Node& n : g.nodes()) {
    if (n.op == "attention") return &n;
  }
  return nullptr;
}

/// The reference's outputs of `a` and `b` on the same random inputs are equal.
void ExpectSameResults(const hlir::Graph& a, const hlir::Graph& b) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<hlir::HostTensor> in;
  for (int v : a.inputs()) {
    const hlir::TensorDesc& d = a.values()[v].desc;
    in.emplace_back(d.dtype, Concrete(d.shape));
    for (double& x : in.back().data) x = hlir::RoundToDType(u(rng), d.dtype);
  }
  auto want = hlir::RunReference(a, in);
  auto got = hlir::RunReference(b, in);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(want->size(), got->size());
  for (size_t o = 0; o < want->size(); ++o) {
    ASSERT_EQ((*want)[o].shape, (*got)[o].shape) << o;
    for (int64_t k = 0; k < (*want)[o].size(); ++k) {
      ASSERT_NEAR((*want)[o].data[k], (*got)[o].data[k], 1e-12) << "output " << o << " at " << k;
    }
  }
}

/// `graph` through the pass and dead-code elimination.
hlir::Graph Folded(const hlir::Graph& graph) {
  auto folded = hlir::FoldLayoutsIntoAttention(graph);
  EXPECT_TRUE(folded.ok()) << folded.status();
  auto live = hlir::EliminateDeadCode(*folded);
  EXPECT_TRUE(live.ok()) << live.status();
  return *live;
}

TEST(FoldLayoutsIntoAttention, HfsOperandsAreReadWhereTheyLieAndTheOutputWrittenTransposed) {
  auto graph = frontend::BuildGraph(HfLayoutAttention(DType::kFloat32, 2, 24, 4, 4, 16,
                                                      /*padded=*/true, /*causal=*/false));
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(Count(*graph, "transpose"), 4) << hlir::GraphToText(*graph);
  const hlir::Graph live = Folded(*graph);
  EXPECT_EQ(Count(live, "transpose"), 0) << hlir::GraphToText(live);
  const hlir::Node* a = Attention(live);
  ASSERT_NE(a, nullptr);
  for (const char* perm : {"q_perm", "k_perm", "v_perm", "out_perm"}) {
    auto p = hlir::GetInts(a->attrs, perm, "attention");
    ASSERT_TRUE(p.ok()) << perm << ": " << hlir::GraphToText(live);
    EXPECT_EQ(*p, (std::vector<int64_t>{0, 2, 1, 3})) << perm;
  }
  // q is the [B, S, H, D] view of the input; the output [B, S, H, D], viewed as the result.
  EXPECT_EQ(live.values()[a->inputs[0]].desc.shape, S({2, 24, 4, 16}));
  EXPECT_EQ(live.values()[a->outputs[0]].desc.shape, S({2, 24, 4, 16}));
  ExpectSameResults(*graph, live);
}

TEST(FoldLayoutsIntoAttention, RepeatKvsExpansionIsReadAsGroupedQueryHeads) {
  auto graph = frontend::BuildGraph(HfLayoutAttention(DType::kFloat32, 2, 20, 8, 2, 16,
                                                      /*padded=*/false, /*causal=*/true));
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(Count(*graph, "broadcast_to"), 2) << hlir::GraphToText(*graph);
  const hlir::Graph live = Folded(*graph);
  EXPECT_EQ(Count(live, "broadcast_to"), 0) << hlir::GraphToText(live);
  EXPECT_EQ(Count(live, "transpose"), 0) << hlir::GraphToText(live);
  const hlir::Node* a = Attention(live);
  ASSERT_NE(a, nullptr);
  // k and v of 2 heads ([B, S, Hkv, D] read with their perms); q of 8.
  EXPECT_EQ(live.values()[a->inputs[1]].desc.shape, S({2, 20, 2, 16})) << hlir::GraphToText(live);
  EXPECT_EQ(live.values()[a->inputs[2]].desc.shape, S({2, 20, 2, 16})) << hlir::GraphToText(live);
  ExpectSameResults(*graph, live);
}

TEST(FoldLayoutsIntoAttention, GPT2sPackedProjectionIsReadAsHeadsOfIt) {
  auto graph = frontend::BuildGraph(PackedQkvAttention(DType::kFloat32, 2, 20, 4, 16));
  ASSERT_TRUE(graph.ok()) << graph.status();
  const hlir::Graph live = Folded(*graph);
  EXPECT_EQ(Count(live, "slice"), 0) << hlir::GraphToText(live);
  EXPECT_EQ(Count(live, "transpose"), 0) << hlir::GraphToText(live);
  const hlir::Node* a = Attention(live);
  ASSERT_NE(a, nullptr);
  // q, k and v are the projection viewed [B, S, 3H, D]: heads [0, 4), [4, 8), [8, 12).
  const char* names[] = {"q_heads", "k_heads", "v_heads"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(live.values()[a->inputs[i]].desc.shape, S({2, 20, 12, 16})) << i;
    auto heads = hlir::GetInts(a->attrs, names[i], "attention");
    ASSERT_TRUE(heads.ok()) << names[i] << ": " << hlir::GraphToText(live);
    EXPECT_EQ(*heads, (std::vector<int64_t>{4 * i, 4})) << names[i];
  }
  ExpectSameResults(*graph, live);
}

TEST(FoldLayoutsIntoAttention, ATransposeAnotherNodeReadsStays) {
  // q's transpose is also an output (a training step's backward reads it so): it stays, and the
  // attention reads it as it is; k's and v's fold.
  frontend::NetBuilder b;
  auto heads = [&](const std::string& name) {
    return b.Transpose(
        b.Reshape(b.CreateInput(DType::kFloat32, S({2, 8, 32}), name), {2, 8, 2, 16}),
        {0, 2, 1, 3});
  };
  auto q = heads("q"), k = heads("k"), v = heads("v");
  auto made = b.Op("attention", {q, k, v}, {});
  b.MarkOutput(made[0]);
  b.MarkOutput(q);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  const hlir::Graph live = Folded(*graph);
  EXPECT_EQ(Count(live, "transpose"), 1) << hlir::GraphToText(live);
  const hlir::Node* a = Attention(live);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->attrs.count("q_perm"), 0u) << hlir::GraphToText(live);
  EXPECT_EQ(a->attrs.count("k_perm"), 1u) << hlir::GraphToText(live);
  EXPECT_EQ(a->attrs.count("out_perm"), 0u) << hlir::GraphToText(live);  // an output itself
  ExpectSameResults(*graph, live);
}

TEST(FoldLayoutsIntoAttention, APermComposedWithItsInverseIsDropped) {
  // A node already reading q through q_perm [0, 2, 1, 3], its input the transpose by the same
  // perm: it reads the transpose's input plainly, the attribute gone; out likewise.
  frontend::NetBuilder b;
  const std::vector<int64_t> swap{0, 2, 1, 3};
  auto x = b.CreateInput(DType::kFloat32, S({2, 4, 12, 16}), "x");
  auto kv = b.CreateInput(DType::kFloat32, S({2, 4, 10, 16}), "kv");
  auto made =
      b.Op("attention", {b.Transpose(x, swap), kv, kv}, {{"q_perm", swap}, {"out_perm", swap}});
  b.MarkOutput(b.Transpose(made[0], swap));
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  const hlir::Graph live = Folded(*graph);
  const hlir::Node* a = Attention(live);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->attrs.count("q_perm"), 0u) << hlir::GraphToText(live);
  EXPECT_EQ(a->attrs.count("out_perm"), 0u) << hlir::GraphToText(live);
  EXPECT_EQ(Count(live, "transpose"), 0) << hlir::GraphToText(live);
  ExpectSameResults(*graph, live);
}

TEST(FoldLayoutsIntoAttention, KAndVAreUnrepeatedTogetherOrNotAtAll) {
  // v's expansion is also an output: v keeps it, so k keeps its own (one Hkv for both).
  frontend::NetBuilder b;
  auto q = b.CreateInput(DType::kFloat32, S({2, 8, 12, 16}), "q");
  auto repeat = [&](const std::string& name) {
    auto x = b.CreateInput(DType::kFloat32, S({2, 2, 12, 16}), name);
    return b.Reshape(b.BroadcastTo(b.Reshape(x, {2, 2, 1, 12, 16}), {2, 2, 4, 12, 16}),
                     {2, 8, 12, 16});
  };
  auto k = repeat("k"), v = repeat("v");
  b.MarkOutput(b.Op("attention", {q, k, v}, {})[0]);
  b.MarkOutput(v);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  const hlir::Graph live = Folded(*graph);
  EXPECT_EQ(Count(live, "broadcast_to"), 2) << hlir::GraphToText(live);
  ExpectSameResults(*graph, live);
}

TEST(AttentionLayoutX86, PermutedOperandsMatchTheReference) {
  // The decomposed compute reading and writing through perms (the x86 library matmuls decline
  // them), HF's [B, S, H, D] layout and one where q is [S, B, H, D] (nn.MultiheadAttention's).
  for (const auto& [q_perm, out_perm] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{0, 2, 1, 3}, {0, 2, 1, 3}}, {{1, 2, 0, 3}, {2, 0, 1, 3}}}) {
    const bool seq_first = q_perm[0] == 1;
    frontend::NetBuilder b;
    auto q = b.CreateInput(DType::kFloat32, seq_first ? S({12, 2, 4, 16}) : S({2, 12, 4, 16}), "q");
    auto k = b.CreateInput(DType::kFloat32, S({2, 10, 2, 16}), "k");
    auto v = b.CreateInput(DType::kFloat32, S({2, 10, 2, 8}), "v");
    auto made = b.Op("attention", {q, k, v},
                     {{"q_perm", q_perm},
                      {"k_perm", std::vector<int64_t>{0, 2, 1, 3}},
                      {"v_perm", std::vector<int64_t>{0, 2, 1, 3}},
                      {"out_perm", out_perm}});
    b.MarkOutput(made[0]);
    b.MarkOutput(made[1]);
    auto program = b.Build();
    ASSERT_TRUE(program.ok()) << program.status();
    auto graph = frontend::BuildGraph(*program);
    ASSERT_TRUE(graph.ok()) << graph.status();
    // The output stored transposed: [B, S, H, Dv], or [S, B, H, Dv].
    EXPECT_EQ(graph->values()[graph->outputs()[0]].desc.shape,
              seq_first ? S({12, 2, 4, 8}) : S({2, 12, 4, 8}));
    // (The reference's perms are checked against explicit transposes by the tests above.)
    RunProgramCase(*program, ir::Target::X86(), RunOnX86);
  }
}

TEST(AttentionLayoutX86, HeadsOfAWiderOperandMatchTheReference) {
  // k and v as heads [2, 4) and [4, 6) of one [B, S, 6, D] value, q whole.
  frontend::NetBuilder b;
  auto q = b.CreateInput(DType::kFloat32, S({2, 9, 2, 16}), "q");
  auto kv = b.CreateInput(DType::kFloat32, S({2, 11, 6, 16}), "kv");
  const std::vector<int64_t> bshd{0, 2, 1, 3};
  auto made = b.Op("attention", {q, kv, kv},
                   {{"q_perm", bshd},
                    {"k_perm", bshd},
                    {"v_perm", bshd},
                    {"out_perm", bshd},
                    {"k_heads", std::vector<int64_t>{2, 2}},
                    {"v_heads", std::vector<int64_t>{4, 2}}});
  b.MarkOutput(made[0]);
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  RunProgramCase(*program, ir::Target::X86(), RunOnX86);
  // The same result as the heads sliced and transposed by ops (the reference on both).
  frontend::NetBuilder e;
  auto eq = e.CreateInput(DType::kFloat32, S({2, 9, 2, 16}), "q");
  auto ekv = e.CreateInput(DType::kFloat32, S({2, 11, 6, 16}), "kv");
  auto heads = [&](int64_t first) {
    return e.Transpose(e.Slice(ekv, {2}, {first}, {first + 2}), bshd);
  };
  auto emade = e.Op("attention", {e.Transpose(eq, bshd), heads(2), heads(4)}, {});
  e.MarkOutput(e.Transpose(emade[0], bshd));
  auto with = frontend::BuildGraph(*program);
  auto explicit_ops = frontend::BuildGraph(*e.Build());
  ASSERT_TRUE(with.ok() && explicit_ops.ok());
  ExpectSameResults(*explicit_ops, *with);
}

TEST(AttentionLayoutError, HeadsOutsideTheOperandAreErrors) {
  frontend::NetBuilder b;
  auto q = b.CreateInput(DType::kFloat32, S({2, 4, 8, 16}), "q");
  b.Op("attention", {q, q, q}, {{"k_heads", std::vector<int64_t>{2, 3}}});
  absl::Status s = b.Build().status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("k's heads [2, 5) are not within its 4 heads"), std::string::npos)
      << s;
}

TEST(AttentionLayoutError, PermsThatMoveTheHeadDimOrRepeatAnAxisAreErrors) {
  for (const std::vector<int64_t>& bad :
       std::vector<std::vector<int64_t>>{{0, 1, 3, 2}, {0, 0, 2, 3}, {0, 2, 1}}) {
    frontend::NetBuilder b;
    auto q = b.CreateInput(DType::kFloat32, S({2, 4, 8, 16}), "q");
    b.Op("attention", {q, q, q}, {{"q_perm", bad}});
    auto program = b.Build();
    absl::Status s = program.ok() ? frontend::BuildGraph(*program).status() : program.status();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("op attention: attribute 'q_perm'"), std::string::npos) << s;
    EXPECT_NE(s.message().find("head dim last"), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace cinn_like::testing
