/// \file Graph passes (DCE, CSE, constant folding, batch_norm simplification) and operator
/// fusion: each rewrite checked by its graph, and every pass checked to preserve results with
/// the reference interpreter on fresh random inputs.
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "frontend/net_builder.h"
#include "hlir/op.h"
#include "hlir/pass/common_subexpression_elimination.h"
#include "hlir/pass/constant_attention_masks.h"
#include "hlir/pass/constant_folding.h"
#include "hlir/pass/conv_layout.h"
#include "hlir/pass/dead_code_elimination.h"
#include "hlir/pass/fold_transpose.h"
#include "hlir/pass/fusion.h"
#include "hlir/pass/graph_dump.h"
#include "hlir/pass/matmul_epilogue.h"
#include "hlir/pass/matmul_padding.h"
#include "hlir/pass/matmul_reshape.h"
#include "hlir/pass/pipeline.h"
#include "hlir/pass/recompute_shared.h"
#include "hlir/pass/reshape_before_transpose.h"
#include "hlir/pass/simplify_batch_norm.h"
#include "hlir/pass/simplify_reshapes.h"
#include "hlir/pass/simplify_transposes.h"
#include "hlir/pass/split_to_slices.h"
#include "hlir/reference_interpreter.h"
#include "ir/flags.h"
#include "tests/fusion_cases.h"

namespace cinn_like::hlir {
namespace {

using frontend::NetBuilder;
using frontend::Var;

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(std::random_device{}());
  return rng;
}

/// Random inputs for a graph: uniform in [-2, 2], in [0.5, 2] for inputs named "var*"
/// (variances must be positive).
std::vector<HostTensor> RandomInputs(const Graph& g) {
  std::vector<HostTensor> inputs;
  for (int v : g.inputs()) {
    const Value& value = g.values()[v];
    HostTensor t(value.desc.dtype, StaticDims(value.desc.shape));
    bool positive = value.name.rfind("var", 0) == 0;
    std::uniform_real_distribution<double> dist(positive ? 0.5 : -2.0, 2.0);
    for (double& x : t.data) x = RoundToDType(dist(Rng()), t.dtype);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

Graph Build(NetBuilder& b) {
  auto program = b.Build();
  EXPECT_TRUE(program.ok()) << program.status();
  auto graph = frontend::BuildGraph(*program);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph();
}

/// Runs both graphs on the same fresh random inputs (three draws) and expects equal outputs
/// within `tol` relative to max(1, |value|). A 16-bit output is compared at four units of its
/// format's last place relative to the output's largest magnitude: a rewrite that computes in
/// another order (batch_norm as scale and shift, a convolution channels last) rounds each
/// intermediate differently, and a later convolution sums those differences.
void ExpectSameResults(const Graph& before, const Graph& after, double tol = 1e-5) {
  ASSERT_EQ(before.outputs().size(), after.outputs().size());
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<HostTensor> inputs = RandomInputs(before);
    auto a = RunReference(before, inputs);
    auto b = RunReference(after, inputs);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    for (size_t o = 0; o < a->size(); ++o) {
      ASSERT_EQ((*a)[o].shape, (*b)[o].shape);
      const DType dt = (*a)[o].dtype;
      const bool half = dt == DType::kFloat16 || dt == DType::kBFloat16;
      double largest = 1;
      for (double x : (*a)[o].data) largest = std::max(largest, std::fabs(x));
      for (int64_t i = 0; i < (*a)[o].size(); ++i) {
        double x = (*a)[o].data[i], y = (*b)[o].data[i];
        const double bound =
            half ? std::max(tol, 4.0 / (dt == DType::kFloat16 ? 1024 : 128)) * largest
                 : tol * std::max(1.0, std::fabs(x));
        ASSERT_NEAR(x, y, bound) << "output " << o << " element " << i;
      }
    }
  }
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

/// Every node in exactly one group, and groups ordered producers first.
void ExpectValidGroups(const FusedGraph& f) {
  std::vector<int> group_of(f.graph.nodes().size(), -1);
  for (size_t g = 0; g < f.groups.size(); ++g) {
    const FusionGroup& group = f.groups[g];
    ASSERT_FALSE(group.nodes.empty());
    EXPECT_TRUE(std::find(group.nodes.begin(), group.nodes.end(), group.master) !=
                group.nodes.end());
    for (int n : group.nodes) {
      ASSERT_EQ(group_of[n], -1) << "node " << n << " is in two groups";
      group_of[n] = static_cast<int>(g);
    }
  }
  for (size_t n = 0; n < group_of.size(); ++n) {
    ASSERT_GE(group_of[n], 0) << "node " << n << " has no group";
    for (int v : f.graph.nodes()[n].inputs) {
      int p = f.graph.values()[v].producer;
      if (p >= 0) EXPECT_LE(group_of[p], group_of[n]) << "group order: node " << p << " -> " << n;
    }
  }
}

/// The pipeline on `g`, checked: results preserved on random inputs, groups valid.
FusedGraph Pipeline(const Graph& g, const PassOptions& options = {}) {
  auto fused = RunGraphPasses(g, options);
  EXPECT_TRUE(fused.ok()) << fused.status();
  if (!fused.ok()) return FusedGraph{};
  ExpectSameResults(g, fused->graph);
  ExpectValidGroups(*fused);
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    EXPECT_EQ(g.values()[g.outputs()[o]].name,
              fused->graph.values()[fused->graph.outputs()[o]].name);
  }
  return *std::move(fused);
}

int CountPattern(const FusedGraph& f, OpPattern p) {
  int n = 0;
  for (auto& g : f.groups) n += g.pattern == p;
  return n;
}

std::string GroupsString(const FusedGraph& f) {
  std::ostringstream s;
  for (auto& g : f.groups) {
    s << "[";
    for (int n : g.nodes) s << " " << f.graph.nodes()[n].op;
    s << " ] ";
  }
  return s.str();
}

TEST(GraphPasses, DeadCodeEliminationKeepsOnlyWhatReachesAnOutput) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({5, 7}), "x");
  Var y = b.Relu(x);
  b.Tanh(b.Exp(x));  // unused
  b.MarkOutput(y);
  Graph g = Build(b);
  ASSERT_EQ(g.nodes().size(), 3u);
  auto out = EliminateDeadCode(g);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->nodes().size(), 1u);
  EXPECT_EQ(out->nodes()[0].op, "relu");
  EXPECT_EQ(out->values()[out->outputs()[0]].name, y.name);
  ExpectSameResults(g, *out);
}

TEST(GraphPasses, CommonSubexpressionsMergeOnlyWithEqualAttributes) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({6, 4}), "x");
  Var a = b.Add(b.Relu(x), b.Relu(x));
  Var l = b.Add(b.LeakyRelu(x, 0.1), b.LeakyRelu(x, 0.2));  // different attrs: both stay
  Var r = b.Add(b.LeakyRelu(x, 0.1), a);                    // same as the first leaky_relu
  b.MarkOutput(b.Add(l, r));
  Graph g = Build(b);
  auto out = EliminateCommonSubexpressions(g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(CountOp(*out, "relu"), 1);
  EXPECT_EQ(CountOp(*out, "leaky_relu"), 2);
  EXPECT_EQ(CountOp(g, "leaky_relu"), 3);
  ExpectSameResults(g, *out);
}

// NaN, 0 and -0 fills are three values: std::map's < on doubles had merged a NaN fill into a
// 0 fill (torch.where(x > 0, x, nan) returned 0).
TEST(GraphPasses, CommonSubexpressionsTellNanAndSignedZerosApart) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({6}), "x");
  Var zero = b.Fill({6}, 0.0, DType::kFloat32);
  Var nan = b.Fill({6}, std::nan(""), DType::kFloat32);
  Var neg = b.Fill({6}, -0.0, DType::kFloat32);
  Var again = b.Fill({6}, std::nan(""), DType::kFloat32);  // the same NaN: merged
  b.MarkOutput(b.Add(b.Add(b.Mul(x, zero), b.Mul(x, nan)), b.Add(b.Div(x, neg), again)));
  Graph g = Build(b);
  auto out = EliminateCommonSubexpressions(g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(CountOp(g, "fill"), 4);
  EXPECT_EQ(CountOp(*out, "fill"), 3);
}

TEST(GraphPasses, CommonSubexpressionsKeepEachGraphOutput) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({3}), "x");
  b.MarkOutput(b.Exp(x));
  b.MarkOutput(b.Exp(x));
  Graph g = Build(b);
  auto out = EliminateCommonSubexpressions(g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(CountOp(*out, "exp"), 2);
  ExpectSameResults(g, *out);
}

TEST(GraphPasses, ConstantFoldingEvaluatesConstantSubgraphsOnly) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4}), "x");
  Var e = b.Exp(b.Mul(b.Fill({4}, 0.5), b.Arange(0, 4, 1, DType::kFloat32)));
  Var big = b.Sin(b.Arange(0, 64, 1, DType::kFloat32));  // over the limit below: stays
  Var y = b.Add(x, e);
  b.MarkOutput(y);
  b.MarkOutput(big);
  b.MarkOutput(e);
  Graph g = Build(b);
  auto folded = FoldConstants(g, /*max_elements=*/16);
  ASSERT_TRUE(folded.ok()) << folded.status();
  auto out = EliminateDeadCode(*folded);
  ASSERT_TRUE(out.ok()) << out.status();
  // e is one constant; the add reads the input x and stays; sin(fill) stays (too large).
  EXPECT_EQ(CountOp(*out, "constant"), 1);
  EXPECT_EQ(CountOp(*out, "add"), 1);
  EXPECT_EQ(CountOp(*out, "sin"), 1);
  EXPECT_EQ(CountOp(*out, "exp"), 0);
  EXPECT_EQ(CountOp(*out, "mul"), 0);
  // The constant holds what the interpreter computes for e, and e keeps its name.
  auto e_id = out->Find(e.name);
  ASSERT_TRUE(e_id.ok()) << e_id.status();
  const Node& c = out->nodes()[out->values()[*e_id].producer];
  ASSERT_EQ(c.op, "constant");
  auto reference = RunReference(g, RandomInputs(g));
  ASSERT_TRUE(reference.ok()) << reference.status();
  const auto& values = std::get<std::vector<double>>(c.attrs.at("values"));
  ASSERT_EQ(values.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(values[i], (*reference)[2].data[i]);
    EXPECT_NEAR(values[i], std::exp(0.5 * i), 1e-6 * std::exp(0.5 * i));
  }
  ExpectSameResults(g, *out, 0);
}

TEST(GraphPasses, ConstantFoldingMakesALargeUniformValueAFill) {
  // HF BERT's test of each query ([1, 1, S, 1]: position >= 0, and-ed with true): all true at
  // any S, a fill above the element limit; a large value that varies stays as it is computed.
  NetBuilder b;
  Var keep = b.CreateInput(DType::kBool, MakeShape({2, 1, 1, 512}), "keep");
  Var rows = b.Reshape(b.Arange(0, 512), {1, 1, 512, 1});
  Var queries = b.LogicalAnd(b.Fill({1}, 1.0, DType::kBool),
                             b.GreaterEqual(rows, b.Fill({1}, 0.0, DType::kInt64)));
  Var varies = b.Mul(rows, b.Fill({1}, 3.0, DType::kInt64));
  b.MarkOutput(b.LogicalAnd(queries, keep));
  b.MarkOutput(varies);
  Graph g = Build(b);
  auto folded = FoldConstants(g, /*max_elements=*/64);
  ASSERT_TRUE(folded.ok()) << folded.status();
  auto out = EliminateDeadCode(*folded);
  ASSERT_TRUE(out.ok()) << out.status();
  auto q = out->Find(queries.name);
  ASSERT_TRUE(q.ok()) << q.status();
  const Node& fill = out->nodes()[out->values()[*q].producer];
  EXPECT_EQ(fill.op, "fill") << GraphToText(*out);
  EXPECT_EQ(out->values()[*q].desc.shape, MakeShape({1, 1, 512, 1}));
  EXPECT_EQ(CountOp(*out, "greater_equal"), 0) << GraphToText(*out);
  EXPECT_EQ(CountOp(*out, "mul"), 1) << GraphToText(*out);  // 0, 3, 6, ...: not uniform
  EXPECT_EQ(CountOp(*out, "constant"), 0) << GraphToText(*out);
  ExpectSameResults(g, *out, 0);
}

TEST(GraphPasses, ConstantOpChecksItsValues) {
  NetBuilder b;
  b.Op("constant", {},
       {{"values", std::vector<double>{1, 2, 3}}, {"shape", std::vector<int64_t>{2, 2}}});
  ASSERT_FALSE(b.status().ok());
  EXPECT_NE(std::string(b.status().message()).find("attribute 'values' holds 3 values"),
            std::string::npos)
      << b.status();
}

TEST(GraphPasses, BatchNormBecomesScaleAndShiftWithTheSameResults) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 4, 5}), "x");
  Var scale = b.CreateInput(DType::kFloat32, MakeShape({3}), "scale");
  Var bias = b.CreateInput(DType::kFloat32, MakeShape({3}), "bias");
  Var mean = b.CreateInput(DType::kFloat32, MakeShape({3}), "mean");
  Var var = b.CreateInput(DType::kFloat32, MakeShape({3}), "var");
  Var y = b.BatchNorm(x, scale, bias, mean, var, 1e-3);
  b.MarkOutput(y);
  Graph g = Build(b);
  auto out = SimplifyBatchNorm(g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(CountOp(*out, "batch_norm"), 0);
  EXPECT_EQ(out->values()[out->outputs()[0]].name, y.name);
  ExpectSameResults(g, *out, 1e-5);
  // Channel-last batch_norm (axis 3) needs no expand_dims.
  NetBuilder c;
  Var xc = c.CreateInput(DType::kFloat32, MakeShape({2, 4, 5, 3}), "x");
  Var ps[4];
  for (int i = 0; i < 4; ++i) {
    ps[i] =
        c.CreateInput(DType::kFloat32, MakeShape({3}), i == 3 ? "var" : "p" + std::to_string(i));
  }
  c.MarkOutput(c.BatchNorm(xc, ps[0], ps[1], ps[2], ps[3], 1e-5, 3));
  Graph gc = Build(c);
  auto outc = SimplifyBatchNorm(gc);
  ASSERT_TRUE(outc.ok()) << outc.status();
  EXPECT_EQ(CountOp(*outc, "expand_dims"), 0);
  ExpectSameResults(gc, *outc, 1e-5);
}

TEST(GraphPasses, TransposedMatmulOperandsAreReadTransposed) {
  // PyTorch's linear: x @ t(w), batched q @ k^T, and a transpose something else also reads.
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({6, 8}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({5, 8}), "w");
  Var q = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 4, 8}), "q");
  Var k = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 7, 8}), "k");
  Var y = b.Matmul(x, b.Transpose(w, {1, 0}));
  Var kt = b.Transpose(k, {0, 1, 3, 2});
  b.MarkOutput(y);
  b.MarkOutput(b.Matmul(q, kt));
  b.MarkOutput(b.Matmul(b.Transpose(x, {1, 0}), w, /*transpose_x=*/true, /*transpose_y=*/true));
  Var kept = b.Transpose(w, {1, 0});
  b.MarkOutput(b.Matmul(x, kept));
  b.MarkOutput(b.Relu(kept));
  // A permutation that is no swap of the last two dims stays a transpose.
  b.MarkOutput(b.Matmul(b.Transpose(q, {1, 0, 2, 3}), b.Transpose(k, {1, 0, 3, 2})));
  Graph g = Build(b);
  auto out = FoldTransposeIntoMatmul(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  // Left: the transpose relu also reads, and both of the last matmul's (q's; k's, which also
  // moves dim 0, as that move alone, the matmul reading it transposed).
  EXPECT_EQ(CountOp(*dce, "transpose"), 3);
  EXPECT_EQ(dce->values()[dce->outputs()[0]].name, y.name);
  ExpectSameResults(g, *dce, 1e-5);
}

TEST(GraphPasses, AKeyTransposedAcrossItsRowsIsReadTransposedByTheMatmul) {
  // HF's eager attention: the key [B, S, H, D] made [B, H, D, S] (perm 0, 2, 3, 1) and viewed
  // as [B*H, D, S] for the batched q @ k^T: a copy reading each head's rows across. Left: a
  // copy to [B, H, S, D] (rows whole), the matmul reading it transposed.
  NetBuilder b;
  Var q = b.CreateInput(DType::kFloat32, MakeShape({6, 5, 4}), "q");
  Var k = b.CreateInput(DType::kFloat32, MakeShape({2, 5, 3, 4}), "k");
  Var kt = b.Reshape(b.Transpose(k, {0, 2, 3, 1}), {6, 4, 5});
  b.MarkOutput(b.Matmul(q, kt));
  // Unchanged: a transpose something else reads, and a view that does not merge the batch.
  Var read_twice = b.Transpose(k, {0, 2, 3, 1});
  b.MarkOutput(b.Matmul(b.CreateInput(DType::kFloat32, MakeShape({2, 3, 5, 4}), "q4"), read_twice));
  b.MarkOutput(b.Exp(read_twice));
  // k.transpose(2, 3) viewed as [B*H, D, S] (Llama's eager key once its expand is gone): the
  // swapped transpose is the identity, so no copy at all, k viewed and read transposed.
  Var k3 = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 5, 4}), "k3");
  b.MarkOutput(b.Matmul(b.CreateInput(DType::kFloat32, MakeShape({6, 7, 4}), "q3"),
                        b.Reshape(b.Transpose(k3, {0, 1, 3, 2}), {6, 4, 5})));
  Var k2 = b.CreateInput(DType::kFloat32, MakeShape({2, 5, 3, 4}), "k2");
  Var odd = b.Reshape(b.Transpose(k2, {0, 2, 3, 1}), {2, 12, 5});  // [2, 3, 4, 5]: dims 1, 2
  b.MarkOutput(b.Matmul(b.CreateInput(DType::kFloat32, MakeShape({2, 6, 12}), "q5"), odd));
  Graph g = Build(b);
  auto out = FoldTransposeIntoMatmul(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  int swapped = 0, kept = 0;
  for (const Node& n : dce->nodes()) {
    if (n.op != "transpose") continue;
    const auto perm = *GetInts(n.attrs, "perm", "transpose", {});
    swapped += perm == std::vector<int64_t>{0, 2, 1, 3};
    kept += perm == std::vector<int64_t>{0, 2, 3, 1};
  }
  EXPECT_EQ(swapped, 1) << GraphToText(*dce);
  EXPECT_EQ(kept, 2) << GraphToText(*dce);
  EXPECT_EQ(CountOp(*dce, "transpose"), 3) << GraphToText(*dce);  // none for k3
  const int first = dce->values()[dce->outputs()[0]].producer;
  ASSERT_GE(first, 0);
  EXPECT_TRUE(*GetBool(dce->nodes()[first].attrs, "transpose_y", "matmul", false));
  ExpectSameResults(g, *dce, 1e-5);
}

TEST(GraphPasses, MatmulEpiloguesFoldBiasAndActivation) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 6, 8}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({5, 8}), "w");
  Var bias = b.CreateInput(DType::kFloat32, MakeShape({5}), "bias");
  Var bias2 = b.CreateInput(DType::kFloat32, MakeShape({1, 5}), "bias2");
  Var full = b.CreateInput(DType::kFloat32, MakeShape({6, 5}), "full");
  // Folded: bias then relu; a [1, n] bias (bias first) then tanh-gelu; a relu alone.
  Var relu = b.Relu(b.Add(b.Matmul(x, w, false, true), bias));
  Var gelu = b.Gelu(b.Add(bias2, b.Matmul(x, w, false, true)), "tanh");
  Var plain = b.Relu(b.Matmul(x, w, false, true));
  // Not folded: the erf gelu (the bias still is), a [6, 5] addend, a product read twice.
  Var erf = b.Gelu(b.Add(b.Matmul(x, w, false, true), bias));
  Var other = b.Add(b.Matmul(x, w, false, true), full);
  Var twice = b.Matmul(x, w, false, true);
  Var twice_add = b.Add(twice, bias), twice_relu = b.Relu(twice);
  // Two [1, 5] products added: one chain takes the add, the other stays a plain matmul.
  Var row = b.CreateInput(DType::kFloat32, MakeShape({1, 8}), "row");
  Var two_products = b.Add(b.Matmul(row, w, false, true), b.Matmul(row, w, false, true));
  // A matmul that has its bias already takes the activation (the second run of the pass).
  Var prebias = b.Relu(b.Op("matmul", {x, w, bias}, {{"transpose_y", true}})[0]);
  for (Var v : {relu, gelu, plain, erf, other, twice_add, twice_relu, prebias, two_products}) {
    b.MarkOutput(v);
  }
  Graph g = Build(b);
  auto out = FoldMatmulEpilogue(g);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<std::string> acts;
  int with_bias = 0;
  for (const Node& n : out->nodes()) {
    if (n.op != "matmul") continue;
    acts.push_back(*GetString(n.attrs, "activation", "matmul", "none"));
    with_bias += n.inputs.size() == 3;
  }
  EXPECT_EQ(acts, (std::vector<std::string>{"relu", "gelu_tanh", "relu", "none", "none", "none",
                                            "none", "none", "relu"}));
  EXPECT_EQ(with_bias, 5);
  EXPECT_EQ(CountOp(*out, "add"), 2);   // the [6, 5] addend and the product read twice
  EXPECT_EQ(CountOp(*out, "gelu"), 1);  // erf
  EXPECT_EQ(CountOp(*out, "relu"), 1);  // after the product read twice
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    EXPECT_EQ(out->values()[out->outputs()[o]].name, g.values()[g.outputs()[o]].name);
  }
  ExpectSameResults(g, *out, 1e-5);
}

TEST(GraphPasses, ConvEpiloguesFoldBiasAndActivation) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 4, 7, 7}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({6, 4, 3, 3}), "w");
  Var bias = b.CreateInput(DType::kFloat32, MakeShape({6}), "bias");
  Var c11 = b.CreateInput(DType::kFloat32, MakeShape({6, 1, 1}), "c11");
  Var c111 = b.CreateInput(DType::kFloat32, MakeShape({1, 6, 1, 1}), "c111");
  Var scale = b.CreateInput(DType::kFloat32, MakeShape({6, 1, 1}), "scale");
  Var row = b.CreateInput(DType::kFloat32, MakeShape({7}), "row");
  // Folded: a [6, 1, 1] bias then relu; a [1, 6, 1, 1] bias (first) then tanh-gelu; a relu
  // alone; a convolution with its own bias takes the relu.
  Var relu = b.Relu(b.Add(b.Conv2d(x, w, {1, 1}, {1, 1}), c11));
  Var gelu = b.Gelu(b.Add(c111, b.Conv2d(x, w, {1, 1}, {1, 1})), "tanh");
  Var plain = b.Relu(b.Conv2d(x, w, {1, 1}, {1, 1}));
  Var own = b.Relu(b.Conv2d(x, w, bias, {1, 1}, {1, 1}));
  // Not folded: a per-channel scale first (batch_norm's), an addend along W, a result read
  // twice.
  Var bn = b.Relu(b.Add(b.Mul(b.Conv2d(x, w, {1, 1}, {1, 1}), scale), c11));
  Var along_w = b.Add(b.Conv2d(x, w, {1, 1}, {1, 1}), row);
  Var twice = b.Conv2d(x, w, {1, 1}, {1, 1});
  Var twice_relu = b.Relu(twice), twice_sig = b.Sigmoid(twice);
  // Nor one that is a graph output itself, nor a bias of another dtype.
  Var kept = b.Conv2d(x, w, {1, 1}, {1, 1});
  Var kept_relu = b.Relu(kept);
  Var c11_f64 = b.CreateInput(DType::kFloat64, MakeShape({6, 1, 1}), "c11_f64");
  Var other_dtype = b.Add(b.Cast(b.Conv2d(x, w, {1, 1}, {1, 1}), DType::kFloat64), c11_f64);
  for (Var v :
       {relu, gelu, plain, own, bn, along_w, twice_relu, twice_sig, kept, kept_relu, other_dtype}) {
    b.MarkOutput(v);
  }
  Graph g = Build(b);
  auto out = FoldConvEpilogue(g);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<std::string> acts;
  int with_bias = 0;
  for (const Node& n : out->nodes()) {
    if (n.op != "conv2d") continue;
    acts.push_back(*GetString(n.attrs, "activation", "conv2d", "none"));
    with_bias += n.inputs.size() == 3;
  }
  EXPECT_EQ(acts, (std::vector<std::string>{"relu", "gelu_tanh", "relu", "relu", "none", "none",
                                            "none", "none", "none"}));
  EXPECT_EQ(with_bias, 3);
  // After the scale, after the result read twice, after the result that is a graph output.
  EXPECT_EQ(CountOp(*out, "relu"), 3);
  EXPECT_EQ(CountOp(*out, "gelu"), 0);
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    EXPECT_EQ(out->values()[out->outputs()[o]].name, g.values()[g.outputs()[o]].name);
  }
  ExpectSameResults(g, *out, 1e-5);
}

TEST(GraphPasses, ReshapesAroundMatmulsFold) {
  // PyTorch's linear on [2, 3, 8]: view [6, 8] -> mm -> view [2, 3, 5]; a product read as
  // [6, 5] (a reshape back); a reshape that is not a merge of leading dims; a transposed x.
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 8}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({8, 5}), "w");
  Var bias = b.CreateInput(DType::kFloat32, MakeShape({5}), "bias");
  Var flat = b.Reshape(x, {6, 8});
  Var linear = b.Reshape(b.Op("matmul", {flat, w, bias}, {{"activation", std::string("relu")}})[0],
                         {2, 3, 5});
  Var as_2d = b.Relu(b.Matmul(flat, w));
  Var w16 = b.CreateInput(DType::kFloat32, MakeShape({16, 5}), "w16");
  Var merged_last = b.Matmul(b.Reshape(x, {3, 16}), w16);  // not a merge of leading dims
  Var xt = b.CreateInput(DType::kFloat32, MakeShape({2, 8, 3}), "xt");
  Var transposed = b.Matmul(b.Reshape(xt, {16, 3}), w16, /*transpose_x=*/true);
  // Two linear layers in a row, and an identity reshape of a matrix (left alone).
  Var w8 = b.CreateInput(DType::kFloat32, MakeShape({8, 8}), "w8");
  Var first = b.Reshape(b.Matmul(b.Reshape(x, {6, 8}), w8), {2, 3, 8});
  Var second = b.Reshape(b.Matmul(b.Reshape(first, {6, 8}), w8), {2, 3, 8});
  Var identity = b.Matmul(b.Reshape(b.Matmul(flat, w8), {6, 8}), w8);
  for (Var v : {linear, as_2d, merged_last, transposed, second, identity}) b.MarkOutput(v);
  Graph g = Build(b);
  auto out = FoldReshapeIntoMatmul(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  int folded = 0;
  for (const Node& n : dce->nodes()) {
    if (n.op == "matmul") folded += dce->values()[n.inputs[0]].name == "x";
  }
  // linear, as_2d, the first of the two layers and the identity's inner product read x itself.
  EXPECT_EQ(folded, 4);
  // Left: the reshape back to [6, 5] before the relu, the two that do not fold, and the
  // identity reshape with the reshape back to [6, 8] before it.
  EXPECT_EQ(CountOp(*dce, "reshape"), 5);
  EXPECT_EQ(dce->values()[dce->outputs()[0]].name, g.values()[g.outputs()[0]].name);
  ExpectSameResults(g, *dce, 1e-5);
}

TEST(GraphPasses, AReturnedProductIsNotFolded) {
  // A language model's logits (view [6, 8] -> mm -> returned as [6, 5], read otherwise only by
  // a reshape nobody reads) and a linear layer's product that the backward saves (returned, and
  // read by its activation through a view): folded, each returned [6, 5] would be a second
  // store of a folded [2, 3, 5] temporary. The product that only its activation reads folds.
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 8}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({8, 5}), "w");
  Var logits = b.Matmul(b.Reshape(x, {6, 8}), w);
  b.Reshape(logits, {2, 3, 5});  // dead
  Var hidden = b.Matmul(b.Reshape(x, {6, 8}), w);
  Var activated = b.Relu(b.Reshape(hidden, {2, 3, 5}));
  Var inner = b.Matmul(b.Reshape(x, {6, 8}), w);
  Var inner_activated = b.Relu(b.Reshape(inner, {2, 3, 5}));
  for (Var v : {logits, hidden, activated, inner_activated}) b.MarkOutput(v);
  Graph g = Build(b);
  auto out = FoldReshapeIntoMatmul(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  std::map<std::string, std::string> x_of;  // each matmul's output -> its x operand
  for (const Node& n : dce->nodes()) {
    if (n.op == "matmul") x_of[dce->values()[n.outputs[0]].name] = dce->values()[n.inputs[0]].name;
  }
  ASSERT_EQ(x_of.size(), 3u);
  for (int o : {0, 1}) {
    const std::string name = g.values()[g.outputs()[o]].name;
    ASSERT_TRUE(x_of.count(name)) << name << " is no longer a matmul's result";
    EXPECT_NE(x_of[name], "x") << name;
  }
  int folded = 0;
  for (const auto& [name, operand] : x_of) folded += operand == "x";
  EXPECT_EQ(folded, 1);
  ExpectSameResults(g, *dce, 1e-5);
}

TEST(GraphPasses, UnalignedMatmulRowsArePaddedAndTheProductSlicedBack) {
  // Row lengths of 16-bit matrices that are not multiples of 8 elements: each such dim pads
  // where it is some matrix's row length, nothing else changes.
  NetBuilder b;
  const DType bf16 = DType::kBFloat16;
  Var x = b.CreateInput(bf16, MakeShape({256, 100}), "x");  // k = 100: x's row
  Var y = b.CreateInput(bf16, MakeShape({100, 700}), "y");  // n = 700: y's and the product's
  Var bias = b.CreateInput(bf16, MakeShape({700}), "bias");
  Var with_bias = b.Op("matmul", {x, y, bias}, {{"activation", std::string("relu")}})[0];
  // x read transposed: m = 300 is x's row length (y's 512 and the product's are aligned).
  Var xt = b.CreateInput(bf16, MakeShape({128, 300}), "xt");
  Var y512 = b.CreateInput(bf16, MakeShape({128, 512}), "y512");
  Var transposed = b.Matmul(xt, y512, /*transpose_x=*/true);
  // A batch of products with a shared right operand of 1001 columns.
  Var xb = b.CreateInput(DType::kFloat16, MakeShape({4, 64, 200}), "xb");
  Var yb = b.CreateInput(DType::kFloat16, MakeShape({200, 1001}), "yb");
  Var batched = b.Matmul(xb, yb);
  // Left alone: too few multiply-adds, a row too short to pad, float32 and float64.
  Var small = b.Matmul(b.CreateInput(bf16, MakeShape({16, 12}), "xs"),
                       b.CreateInput(bf16, MakeShape({12, 20}), "ys"));
  Var short_row = b.Matmul(b.CreateInput(bf16, MakeShape({4096, 8}), "xk"),
                           b.CreateInput(bf16, MakeShape({8, 1024}), "yk"));
  Var single = b.Matmul(b.CreateInput(DType::kFloat32, MakeShape({256, 100}), "xf"),
                        b.CreateInput(DType::kFloat32, MakeShape({100, 700}), "yf"));
  Var wide = b.Matmul(b.CreateInput(DType::kFloat64, MakeShape({256, 100}), "xd"),
                      b.CreateInput(DType::kFloat64, MakeShape({100, 700}), "yd"));
  for (Var v : {with_bias, transposed, batched, small, short_row, single, wide}) b.MarkOutput(v);
  Graph g = Build(b);
  auto out = PadMatmulsForAlignment(g);
  ASSERT_TRUE(out.ok()) << out.status();
  // x's k, y's k and n, the bias; xt's m; yb's n.
  EXPECT_EQ(CountOp(*out, "pad"), 5);
  EXPECT_EQ(CountOp(*out, "slice"), 3);
  for (const Node& n : out->nodes()) {
    if (n.op != "matmul") continue;
    const auto& name = out->values()[n.inputs[0]].name;
    if (name == "xs" || name == "xk" || name == "xf" || name == "xd") continue;  // left alone
    for (int v : n.inputs) {
      const Value& operand = out->values()[v];
      EXPECT_EQ(operand.desc.shape.back().value % 8, 0) << operand.name;
    }
    const Value& product = out->values()[n.outputs[0]];
    EXPECT_EQ(product.desc.shape.back().value % 8, 0) << product.name;
  }
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    EXPECT_EQ(out->values()[out->outputs()[o]].desc, g.values()[g.outputs()[o]].desc);
    EXPECT_EQ(out->values()[out->outputs()[o]].name, g.values()[g.outputs()[o]].name);
  }
  ExpectSameResults(g, *out, 1e-12);
}

TEST(GraphPasses, IdentityReshapesGoAndReshapeChainsCollapse) {
  // A traced linear layer's view back to the same shape after a library call (the copy kernel
  // nn.TransformerEncoderLayer paid), a view of a view, and identity reshapes that are graph
  // outputs: of a value nothing else reads (its node computes the output itself), of an input
  // and of a value read twice (kept: an output is a value of its own).
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 8}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({8, 8}), "w");
  Var act = b.Relu(b.Reshape(b.Matmul(b.Reshape(x, {6, 8}), w), {2, 3, 8}));
  Var same = b.Reshape(act, {2, 3, 8});                    // identity
  Var chained = b.Reshape(b.Reshape(same, {6, 8}), {48});  // a reshape of a reshape
  b.MarkOutput(b.Exp(chained));
  b.MarkOutput(b.Reshape(b.Tanh(x), {2, 3, 8}));  // identity, a graph output
  b.MarkOutput(b.Reshape(x, {2, 3, 8}));          // of an input
  Var twice = b.Sigmoid(x);
  b.MarkOutput(b.Reshape(twice, {2, 3, 8}));  // of a value read twice
  b.MarkOutput(b.Exp(twice));
  // Read twice through an identity reshape dropped before (not a graph output itself).
  Var via = b.Op("cos", {x})[0];
  b.MarkOutput(b.Reshape(b.Reshape(via, {2, 3, 8}), {2, 3, 8}));
  b.MarkOutput(b.Op("sin", {via})[0]);
  // A bias gradient: a column sum kept as [1, 8], viewed as [8] and as itself (the output).
  AttributeMap kept = {{"axes", std::vector<int64_t>{0}}, {"keepdim", true}};
  b.MarkOutput(b.Reshape(b.Reshape(b.Op("reduce_sum", {w}, kept)[0], {8}), {8}));
  Graph g = Build(b);
  auto out = SimplifyReshapes(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  // Left: x's view [6, 8], the product's view back, the one reshape to [48] (of act itself)
  // and the identities of the input and of the values read twice (cos once computed); tanh and
  // the sum compute their outputs.
  EXPECT_EQ(CountOp(*dce, "reshape"), 6);
  EXPECT_EQ(CountOp(*dce, "tanh"), 1);
  EXPECT_EQ(CountOp(*dce, "cos"), 1);
  EXPECT_EQ(CountOp(*dce, "reduce_sum"), 1);
  for (const int o : dce->outputs()) {
    const int p = dce->values()[o].producer;
    if (p >= 0 && (dce->nodes()[p].op == "tanh" || dce->nodes()[p].op == "reduce_sum")) continue;
    if (p >= 0 && dce->nodes()[p].op == "reshape") {
      const int q = dce->values()[dce->nodes()[p].inputs[0]].producer;
      EXPECT_TRUE(q < 0 || dce->nodes()[q].op != "tanh") << dce->values()[o].name;
    }
  }
  for (const Node& n : dce->nodes()) {
    if (n.op != "reshape" || dce->values()[n.outputs[0]].desc.shape != MakeShape({48})) continue;
    const int p = dce->values()[n.inputs[0]].producer;
    ASSERT_GE(p, 0);
    EXPECT_EQ(dce->nodes()[p].op, "relu");
  }
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    EXPECT_EQ(dce->values()[dce->outputs()[o]].name, g.values()[g.outputs()[o]].name);
  }
  ExpectSameResults(g, *dce, 0);
}

TEST(GraphPasses, ABroadcastToItsOwnShapeGoesLikeAnIdentityReshape) {
  // HF's eager attention expands the softmax's probabilities to the shape they have before
  // viewing them as a batch for the matmul: that was a copy kernel of [B, H, S, S] floats.
  // A real broadcast stays, and so does an identity one that is a graph output of an input.
  NetBuilder b;
  Var p = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 4, 4}), "p");
  Var v = b.CreateInput(DType::kFloat32, MakeShape({6, 4, 5}), "v");
  Var row = b.CreateInput(DType::kFloat32, MakeShape({1, 5}), "row");
  Var probs = b.BroadcastTo(b.Softmax(p, 3), {2, 3, 4, 4});
  b.MarkOutput(b.Matmul(b.Reshape(probs, {6, 4, 4}), v));
  b.MarkOutput(b.BroadcastTo(row, {3, 5}));
  b.MarkOutput(b.BroadcastTo(row, {1, 5}));
  Graph g = Build(b);
  auto out = SimplifyReshapes(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  EXPECT_EQ(CountOp(*dce, "broadcast_to"), 2) << GraphToText(*dce);
  for (const Node& n : dce->nodes()) {
    if (n.op != "matmul") continue;
    const int r = dce->values()[n.inputs[0]].producer;
    ASSERT_GE(r, 0);
    ASSERT_EQ(dce->nodes()[r].op, "reshape");
    const int s = dce->values()[dce->nodes()[r].inputs[0]].producer;
    ASSERT_GE(s, 0);
    EXPECT_EQ(dce->nodes()[s].op, "softmax");
  }
  ExpectSameResults(g, *dce, 1e-6);
}

TEST(GraphPasses, AReductionOverAxesOfExtentOneIsAReshape) {
  // Cross-entropy's backward scatters into [rows, 1, vocab] and reduces the axis of one: as a
  // reduction it kept the one-hot out of the row sum's group. Left alone: an axis longer than
  // one.
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({6, 1, 5}), "x");
  b.MarkOutput(b.Op("reduce_max", {x}, {{"axes", std::vector<int64_t>{1}}})[0]);
  b.MarkOutput(b.Op("reduce_sum", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdim", true}})[0]);
  b.MarkOutput(b.Op("reduce_sum", {x}, {{"axes", std::vector<int64_t>{1, 2}}})[0]);
  Graph g = Build(b);
  auto out = SimplifyReshapes(g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(CountOp(*out, "reshape"), 2);
  EXPECT_EQ(CountOp(*out, "reduce_max"), 0);
  EXPECT_EQ(CountOp(*out, "reduce_sum"), 1);
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    EXPECT_EQ(out->values()[out->outputs()[o]].desc, g.values()[g.outputs()[o]].desc);
  }
  ExpectSameResults(g, *out, 0);
}

TEST(GraphPasses, AReshapeDroppingAReductionsKeptDimsIsTheReductionWithoutThem) {
  // A bias gradient: a column sum kept as [1, n] and viewed as [n] (a graph output) was a copy
  // kernel after the reduction's. Left alone: a reduction read by another node too, and a
  // reshape to another shape than the dims without the kept ones.
  NetBuilder b;
  Var g = b.CreateInput(DType::kFloat32, MakeShape({6, 8}), "g");
  AttributeMap kept = {{"axes", std::vector<int64_t>{0}}, {"keepdim", true}};
  b.MarkOutput(b.Reshape(b.Op("reduce_sum", {g}, kept)[0], {8}));
  b.MarkOutput(b.Reshape(b.Op("reduce_max", {g}, kept)[0], {8}));
  Var shared = b.Op("reduce_sum", {b.Exp(g)}, kept)[0];
  b.MarkOutput(b.Reshape(shared, {8}));
  b.MarkOutput(b.Tanh(shared));
  b.MarkOutput(b.Reshape(b.Op("reduce_sum", {b.Tanh(g)}, kept)[0], {2, 4}));
  Graph graph = Build(b);
  auto out = SimplifyReshapes(graph);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  // Left: the shared sum's reshape and the one to [2, 4].
  EXPECT_EQ(CountOp(*dce, "reshape"), 2);
  int without_keepdim = 0;
  for (const Node& n : dce->nodes()) {
    if (n.op.rfind("reduce_", 0) == 0) without_keepdim += !*GetBool(n.attrs, "keepdim", n.op);
  }
  EXPECT_EQ(without_keepdim, 2);
  ExpectSameResults(graph, *dce, 0);
}

TEST(GraphPasses, ACastMovesBeforeTheReshapeItReadsSoThatTheMatmulFoldsIt) {
  // Autocast's view [6, 8] -> cast to bfloat16 -> matmul: the cast moves before the view,
  // which the matmul then folds (it reads [2, 3, 8]); a reshape read twice stays put.
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 8}), "x");
  Var w = b.CreateInput(DType::kBFloat16, MakeShape({8, 4}), "w");
  Var flat = b.Reshape(x, {6, 8});
  // (The product is read by a relu: a product only returned is not folded.)
  b.MarkOutput(b.Relu(b.Matmul(b.Cast(flat, DType::kBFloat16), w)));
  Var twice = b.Reshape(b.Exp(x), {6, 8});
  b.MarkOutput(b.Cast(twice, DType::kBFloat16));
  b.MarkOutput(b.Relu(twice));
  Graph g = Build(b);
  auto out = SimplifyReshapes(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto folded = FoldReshapeIntoMatmul(*out);
  ASSERT_TRUE(folded.ok()) << folded.status();
  auto dce = EliminateDeadCode(*folded);
  ASSERT_TRUE(dce.ok()) << dce.status();
  for (const Node& n : dce->nodes()) {
    if (n.op != "matmul") continue;
    const Value& operand = dce->values()[n.inputs[0]];
    EXPECT_EQ(operand.desc.shape, MakeShape({2, 3, 8})) << operand.name;
    EXPECT_EQ(dce->nodes()[operand.producer].op, "cast");
  }
  // The matmul's product viewed back to [6, 4], and the reshape read twice.
  EXPECT_EQ(CountOp(*dce, "reshape"), 2);
  ExpectSameResults(g, *dce, 0);
}

TEST(GraphPasses, TransposeChainsComposeAndIdentityTransposesGo) {
  // A tied weight's gradient: t(t(w)) read by a matmul; a three-axis chain that composes to
  // another perm; an identity transpose of a computed value that is a graph output (the value
  // is the output, under the output's name: no copy), one of a graph input (kept: an output is
  // never an input), and a second identity of that computed value (kept: two buffers).
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({6, 8}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({5, 8}), "w");
  Var y = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 4}), "y");
  Var wt = b.Transpose(w, {1, 0});
  b.MarkOutput(b.Matmul(x, b.Transpose(wt, {1, 0}), false, true));         // x @ w^T, w read as is
  b.MarkOutput(b.Exp(b.Transpose(b.Transpose(y, {1, 2, 0}), {0, 2, 1})));  // one perm {1, 0, 2}
  Var t = b.Tanh(y);
  b.MarkOutput(b.Transpose(t, {0, 1, 2}));                          // identity of a computed value
  b.MarkOutput(b.Transpose(x, {0, 1}));                             // identity of a graph input
  b.MarkOutput(b.Transpose(b.Transpose(t, {1, 0, 2}), {1, 0, 2}));  // tanh(y) stands for one
  Graph g = Build(b);
  auto out = SimplifyTransposes(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  // y's composed one, x's identity, and the second identity of tanh(y) (two outputs are two
  // buffers).
  EXPECT_EQ(CountOp(*dce, "transpose"), 3);
  ASSERT_EQ(dce->outputs().size(), 5u);
  for (size_t o = 0; o < g.outputs().size(); ++o) {  // outputs keep their names
    EXPECT_EQ(dce->values()[dce->outputs()[o]].name, g.values()[g.outputs()[o]].name);
  }
  EXPECT_EQ(dce->nodes()[dce->values()[dce->outputs()[2]].producer].op, "tanh");
  for (const Node& n : dce->nodes()) {
    if (n.op == "matmul") {
      EXPECT_EQ(dce->values()[n.inputs[1]].name, "w");
    }
    if (n.op == "transpose" && dce->values()[n.inputs[0]].name == "y") {
      EXPECT_EQ(AttributeToString(n.attrs.at("perm")),
                AttributeToString(Attribute(std::vector<int64_t>{1, 0, 2})));
    }
  }
  ExpectSameResults(g, *dce, 0);
}

TEST(GraphPasses, ValuesSeveralGroupsReadAreCopiedIntoEach) {
  // The scaled one-hot of a cross-entropy's backward is read by its row sum's group and by the
  // gradient's: it and the chain that makes it are copied into both, and nothing crosses the
  // groups but the row sum. Same results as the graph before.
  Graph g = frontend::BuildGraph(testing::CrossEntropyBackward(8, 50)).value();
  FusedGraph fused = FuseOperators(g, FusionOptions{});
  auto copied = CopySharedValues(fused, 1000);
  ASSERT_TRUE(copied.ok()) << copied.status();
  ASSERT_TRUE(copied->has_value());
  FusedGraph again = FuseOperators((*copied)->graph, FusionOptions{});
  ExpectValidGroups(again);
  const std::vector<int> group_of = GroupOfNodes(again.groups, again.graph.nodes().size());
  for (int n = 0; n < static_cast<int>(again.graph.nodes().size()); ++n) {
    for (int v : again.graph.nodes()[n].inputs) {
      const int p = again.graph.values()[v].producer;
      if (p < 0 || group_of[p] == group_of[n]) continue;
      const std::string& op = again.graph.nodes()[p].op;
      EXPECT_TRUE(op == "reduce_sum" || op == "arange") << op << " read across groups";
    }
  }
  EXPECT_EQ(CountOp(again.graph, "mul"), 3);  // the one-hot's mul twice, exp * sum once
  ExpectSameResults(g, again.graph);
}

TEST(GraphPasses, AChainWhoseCopiesWouldLoadMoreThanItsStoreIsNotCopied) {
  // A max pool's gradient in small: nine masked terms of one gradient summed (17 nodes, within
  // kMaxCopiedChain), read by a row sum and by a reshape. Copied into both readers, the masks
  // and the gradient would be loaded once more (9 + 4 bytes an element) against the sum's
  // store and two loads saved (3 x 4 bytes): nothing is copied. With two masks (2 + 4 <= 12)
  // the chain is.
  for (int masks : {9, 2}) {
    SCOPED_TRACE(masks);
    NetBuilder b;
    Var g = b.CreateInput(DType::kFloat32, MakeShape({16, 64}), "g");
    Var zero = b.Fill({1}, 0.0);
    Var sum;
    for (int m = 0; m < masks; ++m) {
      Var mask = b.CreateInput(DType::kBool, MakeShape({16, 64}), "mask" + std::to_string(m));
      Var term = b.Where(mask, g, zero);
      sum = m == 0 ? term : b.Add(sum, term);
    }
    b.MarkOutput(b.ReduceSum(sum, {1}));
    b.MarkOutput(b.Reshape(sum, {1024}));
    Graph graph = Build(b);
    auto copied = CopySharedValues(FuseOperators(graph, FusionOptions{}), 1000);
    ASSERT_TRUE(copied.ok()) << copied.status();
    EXPECT_EQ(copied->has_value(), masks == 2);
    if (copied->has_value()) ExpectSameResults(graph, (*copied)->graph);
  }
}

TEST(GraphPasses, ASmallEpilogueOfItsGroupsReductionIsCopiedIntoItsReaders) {
  // A BatchNorm's variance: the sum of squares over [N, H, W] divided by their count, [1, C, 1,
  // 1], read by the normalization (rsqrt) and by the running variance's update. By bytes the
  // copies lose (the sum, not stored before, is stored and loaded twice), but stored the
  // variance is a [C] kernel of its own after the sum's: it is copied, the sum stored by its
  // own kernel. The same over a large value (the sum over the batch of [4, 128, 64], 32 KiB):
  // bytes decide, not copied. Nor is a small one that also reads a graph input (the variance
  // times a [C] weight): not an epilogue of the group's reductions alone, bytes decide.
  for (int which : {0, 1, 2}) {
    const bool small = which != 1, weighted = which == 2;
    SCOPED_TRACE(which);
    NetBuilder b;
    Var x = b.CreateInput(DType::kFloat32,
                          small ? MakeShape({8, 16, 4, 4}) : MakeShape({4, 128, 64}), "x");
    Var sum = small ? b.ReduceSum(b.Mul(x, x), {0, 2, 3}, /*keepdim=*/true)
                    : b.ReduceSum(b.Mul(x, x), {0}, /*keepdim=*/true);
    Var var = b.Div(sum, b.Fill({1}, small ? 128.0 : 4.0));
    if (weighted)
      var = b.Mul(var, b.CreateInput(DType::kFloat32, MakeShape({1, 16, 1, 1}), "gamma"));
    b.MarkOutput(b.Mul(x, b.Rsqrt(b.Add(var, b.Fill({1}, 1e-5)))));
    b.MarkOutput(b.Mul(var, b.Fill({1}, 0.9)));
    Graph graph = Build(b);
    auto copied = CopySharedValues(FuseOperators(graph, FusionOptions{}), 1000);
    ASSERT_TRUE(copied.ok()) << copied.status();
    EXPECT_EQ(copied->has_value(), which == 0);
    if (copied->has_value()) ExpectSameResults(graph, (*copied)->graph);
  }
}

TEST(GraphPasses, AGatheredMaskReadBroadcastOverHeadsIsStoredNotCopied) {
  // HF's padding mask: the attention mask [B, S] gathered at each (batch, key), made an additive
  // [B, 1, S, S] mask, read by two layers' softmaxes over [B, H, S, S]. Copied, each softmax
  // would gather per element of all H heads: with H = 4 it is stored once (no copy); with
  // H = 1 (read at its own size) bytes decide as before, and it is copied.
  for (int64_t heads : {4, 1}) {
    SCOPED_TRACE(heads);
    constexpr int64_t kB = 2, kS = 8;
    NetBuilder b;
    Var keep = b.CreateInput(DType::kFloat32, MakeShape({kB * kS}), "keep");
    Var index = b.Op("arange", {}, {{"end", static_cast<double>(kB * kS)}, {"dtype", "int64"}})[0];
    Var kept = b.Reshape(b.Op("gather", {keep, index}, {{"axis", int64_t{0}}})[0], {kB, 1, 1, kS});
    Var rows = b.BroadcastTo(b.Greater(kept, b.Fill({1}, 0.0)), {kB, 1, kS, kS});
    Var mask = b.Where(rows, b.Fill({1}, 0.0), b.Fill({1}, -1e30));
    for (const char* name : {"s1", "s2"}) {
      Var scores = b.CreateInput(DType::kFloat32, MakeShape({kB, heads, kS, kS}), name);
      b.MarkOutput(b.Softmax(b.Add(scores, mask), 3));
    }
    Graph graph = Build(b);
    auto copied = CopySharedValues(FuseOperators(graph, FusionOptions{}), 1000);
    ASSERT_TRUE(copied.ok()) << copied.status();
    EXPECT_EQ(copied->has_value(), heads == 1);
    if (copied->has_value()) {
      EXPECT_EQ(CountOp((*copied)->graph, "gather"), 2);
      ExpectSameResults(graph, (*copied)->graph);
    }
  }
}

TEST(GraphPasses, AValueThatReadsAnotherGroupsCheapValueIsNotCopied) {
  // A residual stream: x1 = x0 + a read by its row sum and by x2 = x1 + c, which its row sum
  // and an exp read. x1 reads graph inputs: copied into both readers' groups; x2 reads x1, a
  // cheap value of another group: stored, so the stream is not summed again in every group
  // that reads it.
  NetBuilder b;
  Var x0 = b.CreateInput(DType::kFloat32, MakeShape({4, 16}), "x0");
  Var a = b.CreateInput(DType::kFloat32, MakeShape({4, 16}), "a");
  Var c = b.CreateInput(DType::kFloat32, MakeShape({4, 16}), "c");
  Var x1 = b.Add(x0, a);
  b.MarkOutput(b.ReduceSum(x1, {1}));
  Var x2 = b.Add(x1, c);
  b.MarkOutput(b.ReduceSum(x2, {1}));
  b.MarkOutput(b.Reshape(b.Exp(x2), {64}));
  Graph g = Build(b);
  FusedGraph fused = FuseOperators(g, FusionOptions{});
  auto copied = CopySharedValues(fused, 1000);
  ASSERT_TRUE(copied.ok()) << copied.status();
  ASSERT_TRUE(copied->has_value());
  EXPECT_EQ(CountOp((*copied)->graph, "add"), CountOp(g, "add") + 1);  // x1 twice, x2 once
  ExpectSameResults(g, (*copied)->graph);
}

TEST(GraphPasses, SplitsBecomeSlicesThatFuseWithTheirReaders) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4, 12, 6}), "x");
  auto parts =
      b.Op("split", {x}, {{"axis", int64_t{1}}, {"sections", std::vector<int64_t>{3, -1, 4}}});
  b.MarkOutput(b.Relu(parts[0]));
  b.MarkOutput(b.Transpose(parts[1], {0, 2, 1}));
  b.MarkOutput(parts[2]);
  Graph g = Build(b);
  auto out = SplitToSlices(g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(CountOp(*out, "split"), 0);
  EXPECT_EQ(CountOp(*out, "slice"), 3);
  EXPECT_EQ(out->values()[out->outputs()[2]].name, g.values()[g.outputs()[2]].name);
  ExpectSameResults(g, *out, 0);
  FusionOptions options;
  options.enabled = true;
  FusedGraph fused = FuseOperators(*out, options);
  EXPECT_EQ(fused.groups.size(), 3u);  // each slice with its reader, not a kernel of its own
}

/// The conv2d nodes of `g` that run channels last.
int NhwcConvolutions(const Graph& g) {
  int nhwc = 0;
  for (const Node& n : g.nodes()) {
    if (n.op == "conv2d")
      nhwc += GetString(n.attrs, "data_format", "conv2d", "NCHW").value() == "NHWC";
  }
  return nhwc;
}

/// The transposes of whole activations in `g` (their batch `batch`, where weights and
/// per-channel parameters have other leading dims).
int WholeActivationTransposes(const Graph& g, int64_t batch) {
  int full = 0;
  for (const Node& n : g.nodes()) {
    full += n.op == "transpose" && g.values()[n.outputs[0]].desc.shape[0].value == batch;
  }
  return full;
}

TEST(GraphPasses, Float16ConvolutionsRunChannelsLastBetweenTransposes) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat16, MakeShape({2, 4, 7, 6}), "x");
  Var w = b.CreateInput(DType::kFloat16, MakeShape({6, 2, 3, 3}), "w");
  Var bias = b.CreateInput(DType::kFloat16, MakeShape({6}), "bias");
  Var x_nhwc = b.CreateInput(DType::kFloat16, MakeShape({2, 7, 6, 4}), "x_nhwc");
  Var x32 = b.CreateInput(DType::kFloat32, MakeShape({2, 4, 7, 6}), "x32");
  Var w32 = b.CreateInput(DType::kFloat32, MakeShape({6, 2, 3, 3}), "w32");
  AttributeMap attrs{{"groups", int64_t{2}},
                     {"paddings", std::vector<int64_t>{1, 1}},
                     {"strides", std::vector<int64_t>{2, 1}}};
  b.MarkOutput(b.Relu(b.Op("conv2d", {x, w, bias}, attrs)[0]));
  // An input already channels last: its transpose to NCHW cancels the pass's.
  b.MarkOutput(b.Op("conv2d", {b.Transpose(x_nhwc, {0, 3, 1, 2}), w}, attrs)[0]);
  b.MarkOutput(b.Op("conv2d", {x32, w32}, attrs)[0]);  // float32 stays NCHW
  AttributeMap asymmetric = attrs;
  asymmetric["paddings"] = std::vector<int64_t>{1, 0, 1, 1};  // the library call declines it
  b.MarkOutput(b.Op("conv2d", {x, w}, asymmetric)[0]);
  Graph g = Build(b);
  auto out = ConvToChannelsLast(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  EXPECT_EQ(NhwcConvolutions(*dce), 2);
  // x, w (once per conv: common-subexpression elimination merges them later) and two results;
  // x_nhwc's transpose is gone.
  EXPECT_EQ(CountOp(*dce, "transpose"), 5);
  ExpectSameResults(g, *dce, 2e-3);
  PassOptions options;
  options.conv_channels_last = true;
  FusedGraph f = Pipeline(g, options);
  EXPECT_EQ(CountOp(f.graph, "transpose"), 4) << GroupsString(f);
}

TEST(GraphPasses, ChannelsLastRunsThroughElementwiseOpsBetweenConvolutions) {
  // conv -> batch_norm -> relu -> conv -> + residual -> relu: channels last throughout, a
  // transpose only where the graph's inputs enter and where its output leaves (and the
  // residual, an NCHW input added to a channels-last value).
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat16, MakeShape({2, 8, 6, 5}), "x");
  Var w1 = b.CreateInput(DType::kFloat16, MakeShape({8, 8, 3, 3}), "w1");
  Var w2 = b.CreateInput(DType::kFloat16, MakeShape({8, 8, 3, 3}), "w2");
  Var p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = b.CreateInput(DType::kFloat16, MakeShape({8}), i == 3 ? "var" : "p" + std::to_string(i));
  }
  AttributeMap pad{{"paddings", std::vector<int64_t>{1, 1}}};
  Var h = b.Relu(b.BatchNorm(b.Op("conv2d", {x, w1}, pad)[0], p[0], p[1], p[2], p[3]));
  b.MarkOutput(b.Relu(b.Add(b.Op("conv2d", {h, w2}, pad)[0], x)));
  Graph g = Build(b);
  PassOptions options;
  options.conv_channels_last = true;
  FusedGraph f = Pipeline(g, options);  // results checked against the graph's
  // x in (once, shared by conv and residual), y out
  EXPECT_EQ(WholeActivationTransposes(f.graph, 2), 2) << GroupsString(f);
  EXPECT_EQ(CountOp(f.graph, "transpose"), 2 + 2 + 2) << GroupsString(f);  // + w1, w2, 2 params
}

TEST(GraphPasses, Float32ConvolutionsRunChannelsLastBetweenChannelsLastNorms) {
  // The convolutions run channels last, each norm reads its rows contiguous (its permute
  // cancels), and the residual stream stays channels last: whole activations are transposed
  // only where the graph's input enters (once for the convolution and the residual) and where
  // its output leaves.
  auto graph = frontend::BuildGraph(testing::ConvNextBlocks(8, 9, 7));
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Graph& g = *graph;
  auto out = ConvToChannelsLast(g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(NhwcConvolutions(*out), 2);
  ExpectSameResults(g, *out, 1e-4);
  PassOptions options;
  options.conv_channels_last = true;
  FusedGraph f = Pipeline(g, options);  // results checked against the graph's
  EXPECT_EQ(WholeActivationTransposes(f.graph, 2), 2) << GroupsString(f);
}

TEST(GraphPasses, ReshapesThatSplitATransposesDimsMoveBeforeIt) {
  // nn.MultiheadAttention's q: view(S, B * H, d).transpose(0, 1).view(B, H, S, d), here with
  // ones around; a view that merges the transposed dims stays after its transpose.
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({5, 12, 8}), "x");
  b.MarkOutput(b.Reshape(b.Transpose(x, {1, 0, 2}), {4, 3, 5, 8}));
  b.MarkOutput(b.Reshape(b.Transpose(x, {2, 0, 1}), {1, 2, 4, 5, 1, 12, 1}));
  b.MarkOutput(b.Reshape(b.Transpose(x, {1, 0, 2}), {60, 8}));  // merges 12 and 5
  Graph g = Build(b);
  auto out = MoveReshapesBeforeTransposes(g);
  ASSERT_TRUE(out.ok()) << out.status();
  auto dce = EliminateDeadCode(*out);
  ASSERT_TRUE(dce.ok()) << dce.status();
  int after_transpose = 0;
  for (const Node& n : dce->nodes()) {
    const int p = dce->values()[n.inputs[0]].producer;
    after_transpose += n.op == "reshape" && p >= 0 && dce->nodes()[p].op == "transpose";
  }
  EXPECT_EQ(after_transpose, 1) << GraphToText(*dce);
  EXPECT_EQ(dce->values()[dce->outputs()[0]].name, g.values()[g.outputs()[0]].name);
  ExpectSameResults(g, *dce);
}

/// Attention of [2, 3, 8, 4] q, k, v under a mask made by `mask` from key positions j
/// [1, 8] and query positions i [8, 1] (int64 aranges) and the builder; with `grad`, its
/// attention_grad too (random out, grad_out and logsumexp), each output returned.
template <typename MakeMask>
Graph AttentionUnderMask(MakeMask mask, bool causal = false, bool grad = false) {
  NetBuilder b;
  const int64_t B = 2, H = 3, L = 8, D = 4;
  std::vector<Var> qkv;
  for (const char* name : {"q", "k", "v"}) {
    qkv.push_back(b.CreateInput(DType::kFloat32, MakeShape({B, H, L, D}), name));
  }
  Var j = b.Reshape(b.Arange(0, L), {1, L}), i = b.Reshape(b.Arange(0, L), {L, 1});
  Var m = b.BroadcastTo(mask(b, i, j), {B, 1, L, L});
  AttributeMap attrs{{"scale", 0.5}, {"causal", causal}};
  std::vector<Var> in = qkv;
  in.push_back(m);
  for (const Var& o : b.Op("attention", in, attrs)) b.MarkOutput(o);
  if (grad) {
    std::vector<Var> g = qkv;
    g.push_back(b.CreateInput(DType::kFloat32, MakeShape({B, H, L, D}), "out"));
    g.push_back(b.CreateInput(DType::kFloat32, MakeShape({B, H, L, D}), "grad_out"));
    g.push_back(b.CreateInput(DType::kFloat32, MakeShape({B, H, L}), "lse"));
    g.push_back(m);
    for (const Var& o : b.Op("attention_grad", g, attrs)) b.MarkOutput(o);
  }
  return Build(b);
}

/// The attention-like nodes of `g` as (inputs, causal).
std::vector<std::pair<size_t, bool>> AttentionNodes(const Graph& g) {
  std::vector<std::pair<size_t, bool>> found;
  for (const Node& n : g.nodes()) {
    if (n.op != "attention" && n.op != "attention_grad") continue;
    found.emplace_back(n.inputs.size(), GetBool(n.attrs, "causal", n.op, false).value());
  }
  return found;
}

TEST(GraphPasses, ConstantAttentionMasksBecomeTheCausalAttributeOrNone) {
  // Hugging Face builds its causal mask in the graph from positions (masking_utils): a float
  // mask of 0 and -inf, or a bool one, the same for every batch row; here made from aranges.
  using Nodes = std::vector<std::pair<size_t, bool>>;
  const double inf = std::numeric_limits<double>::infinity();
  auto causal_float = [&](NetBuilder& b, Var i, Var j) {
    return b.Where(b.LessEqual(j, i), b.Fill({1}, 0), b.Fill({1}, -inf));
  };
  auto causal_lowest = [&](NetBuilder& b, Var i, Var j) {  // eager masks: finfo(float32).min
    return b.Where(b.LessEqual(j, i), b.Fill({1}, 0),
                   b.Fill({1}, -static_cast<double>(std::numeric_limits<float>::max())));
  };
  auto causal_half_lowest = [&](NetBuilder& b, Var i, Var j) {  // finfo(float16).min
    return b.Where(b.LessEqual(j, i), b.Fill({1}, 0), b.Fill({1}, -65504));
  };
  auto causal_bias = [&](NetBuilder& b, Var i, Var j) {  // -1000 is a bias, not a drop
    return b.Where(b.LessEqual(j, i), b.Fill({1}, 0), b.Fill({1}, -1000));
  };
  auto all_true = [](NetBuilder& b, Var i, Var j) {
    return b.LogicalAnd(b.GreaterEqual(j, b.Fill({1}, 0, DType::kInt64)),
                        b.GreaterEqual(i, b.Fill({1}, 0, DType::kInt64)));
  };
  auto window = [](NetBuilder& b, Var i, Var j) {  // j <= i and j > i - 3: stays a mask
    return b.LogicalAnd(b.LessEqual(j, i), b.Greater(j, b.Sub(i, b.Fill({1}, 3, DType::kInt64))));
  };
  auto bias = [](NetBuilder& b, Var i, Var j) {  // an additive bias (ALiBi-like): stays
    return b.Mul(b.Cast(b.Sub(j, i), DType::kFloat32), b.Fill({1}, 0.5));
  };
  struct Case {
    std::string name;
    Graph graph;
    Nodes before, after;
  };
  std::vector<Case> cases;
  cases.push_back({"causal float", AttentionUnderMask(causal_float), {{4, false}}, {{3, true}}});
  cases.push_back({"causal lowest", AttentionUnderMask(causal_lowest), {{4, false}}, {{3, true}}});
  cases.push_back(
      {"causal float16 lowest", AttentionUnderMask(causal_half_lowest), {{4, false}}, {{3, true}}});
  cases.push_back({"causal -1000", AttentionUnderMask(causal_bias), {{4, false}}, {{4, false}}});
  cases.push_back(
      {"causal bool",
       AttentionUnderMask([](NetBuilder& b, Var i, Var j) { return b.LessEqual(j, i); }),
       {{4, false}},
       {{3, true}}});
  cases.push_back({"backward too",
                   AttentionUnderMask(causal_float, false, /*grad=*/true),
                   {{4, false}, {7, false}},
                   {{3, true}, {6, true}}});
  cases.push_back({"keeps all", AttentionUnderMask(all_true), {{4, false}}, {{3, false}}});
  cases.push_back({"causal and causal attribute",
                   AttentionUnderMask(causal_float, true),
                   {{4, true}},
                   {{3, true}}});
  cases.push_back({"window", AttentionUnderMask(window), {{4, false}}, {{4, false}}});
  cases.push_back({"bias", AttentionUnderMask(bias), {{4, false}}, {{4, false}}});
  // A mask read from an input (a padding mask) is not evaluated.
  {
    NetBuilder b;
    std::vector<Var> in;
    for (const char* name : {"q", "k", "v"}) {
      in.push_back(b.CreateInput(DType::kFloat32, MakeShape({2, 3, 8, 4}), name));
    }
    Var pad = b.CreateInput(DType::kBool, MakeShape({2, 1, 1, 8}), "pad");
    Var causal = b.LessEqual(b.Reshape(b.Arange(0, 8), {1, 8}), b.Reshape(b.Arange(0, 8), {8, 1}));
    in.push_back(b.LogicalAnd(causal, pad));
    for (const Var& o : b.Op("attention", in, {})) b.MarkOutput(o);
    cases.push_back({"from an input", Build(b), {{4, false}}, {{4, false}}});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(AttentionNodes(c.graph), c.before);
    auto out = SimplifyConstantAttentionMasks(c.graph);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(AttentionNodes(*out), c.after) << GraphToText(*out);
    ExpectSameResults(c.graph, *out);
  }
  // A mask the reference interpreter cannot evaluate (a gather out of range) stays, and the
  // graph still compiles as before.
  {
    Graph bad = AttentionUnderMask([](NetBuilder& b, Var i, Var j) {
      Var far = b.Gather(b.Arange(0, 8), b.Fill({8}, 100, DType::kInt64), 0);
      return b.LessEqual(b.Reshape(far, {1, 8}), i);
    });
    auto out = SimplifyConstantAttentionMasks(bad);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(AttentionNodes(*out), (Nodes{{4, false}}));
  }
  // The limit counts the values computing the mask before its broadcasts (162 elements here:
  // two aranges, their views, two fills, the [8, 8] comparison and where; not the [2, 1, 8, 8]
  // broadcast: PyTorch's CUDA attention expands a mask over the heads). Past it a mask stays.
  auto within = SimplifyConstantAttentionMasks(cases[0].graph, /*max_elements=*/200);
  ASSERT_TRUE(within.ok()) << within.status();
  EXPECT_EQ(AttentionNodes(*within), (Nodes{{3, true}}));
  auto past = SimplifyConstantAttentionMasks(cases[0].graph, /*max_elements=*/100);
  ASSERT_TRUE(past.ok()) << past.status();
  EXPECT_EQ(AttentionNodes(*past), (Nodes{{4, false}}));
}

TEST(GraphPasses, RewriterFreshNamesAvoidNamesOfBothGraphs) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3}), "x");
  Var p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = b.CreateInput(DType::kFloat32, MakeShape({3}), i == 3 ? "var" : "p" + std::to_string(i));
  }
  std::vector<Var> y = b.Op("batch_norm", {x, p[0], p[1], p[2], p[3]}, {});
  ASSERT_EQ(y.size(), 1u);
  // The name the simplification would pick first for an intermediate is taken.
  Var taken = b.CreateInput(DType::kFloat32, MakeShape({2, 3}), y[0].name + "_bn_0");
  Var later = b.Op("exp", {taken}, {})[0];
  b.MarkOutput(y[0]);
  b.MarkOutput(later);
  Graph g = Build(b);
  auto out = SimplifyBatchNorm(g);
  ASSERT_TRUE(out.ok()) << out.status();
  std::set<std::string> names;
  for (const Value& v : out->values()) EXPECT_TRUE(names.insert(v.name).second) << v.name;
  EXPECT_EQ(out->values()[out->outputs()[0]].name, y[0].name);
  ExpectSameResults(g, *out);
}

TEST(GraphPasses, BatchNormWithConstantParametersFoldsToOneMulAndAdd) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 4, 4}), "x");
  Var scale = b.Arange(1, 4, 1, DType::kFloat32), bias = b.Fill({3}, 0.5);
  Var mean = b.Sin(b.Arange(0, 3, 1, DType::kFloat32)), var = b.Fill({3}, 2.0);
  b.MarkOutput(b.Relu(b.BatchNorm(x, scale, bias, mean, var)));
  Graph g = Build(b);
  FusedGraph f = Pipeline(g);
  std::vector<std::string> ops;
  for (const Node& n : f.graph.nodes()) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"constant", "constant", "mul", "add", "relu"}));
  // Constants are data, each alone; the scale, shift and relu are one group.
  ASSERT_EQ(f.groups.size(), 3u) << GroupsString(f);
  EXPECT_EQ(f.groups[0].pattern, OpPattern::kOpaque);
  EXPECT_EQ(f.groups[1].pattern, OpPattern::kOpaque);
  EXPECT_EQ(f.groups[2].nodes, (std::vector<int>{2, 3, 4}));
}

TEST(Fusion, BiasGeluIsOneGroup) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 16}), "x");
  Var bias = b.CreateInput(DType::kFloat32, MakeShape({16}), "bias");
  b.MarkOutput(b.Gelu(b.Add(x, bias)));
  FusedGraph f = Pipeline(Build(b));
  ASSERT_EQ(f.groups.size(), 1u) << GroupsString(f);
  EXPECT_EQ(f.groups[0].pattern, OpPattern::kBroadcast);
  EXPECT_EQ(f.groups[0].nodes.size(), 2u);
}

TEST(Fusion, SoftmaxOpIsOneGroup) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x");
  b.MarkOutput(b.Softmax(x));
  FusedGraph f = Pipeline(Build(b));
  ASSERT_EQ(f.groups.size(), 1u) << GroupsString(f);
  EXPECT_EQ(f.groups[0].pattern, OpPattern::kReduction);
}

TEST(Fusion, DecomposedSoftmaxIsOneGroupByTheMultiReduceRule) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x");
  Var e = b.Exp(b.Sub(x, b.ReduceMax(x, {-1}, true)));
  b.MarkOutput(b.Div(e, b.ReduceSum(e, {1}, true)));
  Graph g = Build(b);
  FusedGraph f = Pipeline(g);
  ASSERT_EQ(f.groups.size(), 1u) << GroupsString(f);
  EXPECT_EQ(f.groups[0].pattern, OpPattern::kReduction);
  EXPECT_EQ(f.graph.nodes()[f.groups[0].master].op, "reduce_sum");
  // The same against the softmax op.
  NetBuilder s;
  s.MarkOutput(s.Softmax(s.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x")));
  ExpectSameResults(g, Build(s), 1e-6);
}

// Fusion groups reductions by OpDef::reduce_axes, so every reduction over whole axes declares
// them; the pools reduce over windows and index_add over the rows its index picks: they declare
// none (they join no other reduction).
TEST(OpRegistry, EveryReductionOverAxesDeclaresItsReduceAxes) {
  const std::set<std::string> windowed = {"max_pool2d", "avg_pool2d", "index_add"};
  for (const std::string& op : OpRegistry::Global().Names()) {
    const OpDef& def = **OpRegistry::Global().Find(op);
    bool over_axes = def.pattern == OpPattern::kReduction && !windowed.count(op);
    EXPECT_EQ(static_cast<bool>(def.reduce_axes), over_axes) << op;
  }
}

TEST(OpRegistry, ReduceAxesFollowEachOpsAttributes) {
  const std::vector<TensorDesc> x = {TensorDesc{DType::kFloat32, MakeShape({2, 3, 4})}};
  auto axes = [&](const std::string& op, const AttributeMap& attrs) {
    auto a = (*OpRegistry::Global().Find(op))->reduce_axes(x, attrs);
    EXPECT_TRUE(a.ok()) << op << ": " << a.status();
    return a.ok() ? *a : std::vector<int>{-1};
  };
  using Axes = std::vector<int>;
  EXPECT_EQ(axes("reduce_sum", {{"axes", std::vector<int64_t>{-1, 0}}}), (Axes{0, 2}));
  EXPECT_EQ(axes("reduce_mean", {}), (Axes{0, 1, 2}));
  EXPECT_EQ(axes("argmax", {{"axis", int64_t{1}}}), (Axes{1}));
  EXPECT_EQ(axes("softmax", {}), (Axes{2}));
  EXPECT_EQ(axes("log_softmax", {{"axis", int64_t{0}}}), (Axes{0}));
  EXPECT_EQ(axes("layer_norm", {{"axis", int64_t{1}}}), (Axes{1, 2}));
  EXPECT_EQ(axes("rms_norm", {}), (Axes{2}));
  auto missing = (*OpRegistry::Global().Find("argmin"))->reduce_axes(x, {});
  EXPECT_FALSE(missing.ok());  // argmin's axis has no default
}

TEST(OpRegistry, OnlyOpsOfNoInputsAreCompileTimeValues) {
  for (const std::string& op : OpRegistry::Global().Names()) {
    const bool known = op == "constant" || op == "fill" || op == "arange";
    EXPECT_EQ((*OpRegistry::Global().Find(op))->compile_time_value, known) << op;
  }
}

TEST(Fusion, SoftmaxAndLayerNormOverTheSameRowsAreOneGroupOtherRowsTwo) {
  for (int64_t axis : {int64_t{-1}, int64_t{0}}) {
    NetBuilder b;
    Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x");
    b.MarkOutput(b.Op("layer_norm", {b.Softmax(x, axis)}, {})[0]);
    FusedGraph f = Pipeline(Build(b));
    EXPECT_EQ(f.groups.size(), axis == -1 ? 1u : 2u)
        << "softmax axis " << axis << ": " << GroupsString(f);
  }
}

TEST(Fusion, ReductionsOverDifferentAxesAreTwoGroups) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x");
  Var c = b.Sub(x, b.ReduceSum(x, {1}, true));
  b.MarkOutput(b.ReduceSum(c, {0}));
  FusedGraph f = Pipeline(Build(b));
  EXPECT_EQ(f.groups.size(), 2u) << GroupsString(f);
}

TEST(Fusion, InjectiveProducersFuseIntoAReductionButNotAfterIt) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({6, 10}), "x");
  Var s = b.ReduceSum(b.Transpose(b.Exp(x), {1, 0}), {1});  // exp, transpose: its input
  // The relu joins the reshape first (consumers decide first), and then the reduction may not
  // join a group holding an injective op.
  b.MarkOutput(b.Reshape(b.Relu(s), {2, 5}));
  FusedGraph f = Pipeline(Build(b));
  ASSERT_EQ(f.groups.size(), 2u) << GroupsString(f);
  EXPECT_EQ(f.groups[0].nodes, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(f.graph.nodes()[f.groups[0].master].op, "reduce_sum");
  EXPECT_EQ(f.groups[1].nodes, (std::vector<int>{3, 4}));
  EXPECT_EQ(f.groups[1].pattern, OpPattern::kInjective);
}

TEST(Fusion, LayerNormOpAndDecomposedAreOneGroup) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4, 64}), "x");
  Var s = b.CreateInput(DType::kFloat32, MakeShape({64}), "s");
  Var t = b.CreateInput(DType::kFloat32, MakeShape({64}), "t");
  b.MarkOutput(b.LayerNorm(x, s, t));
  Graph op = Build(b);
  FusedGraph f = Pipeline(op);
  EXPECT_EQ(f.groups.size(), 1u) << GroupsString(f);

  NetBuilder d;
  Var dx = d.CreateInput(DType::kFloat32, MakeShape({4, 64}), "x");
  Var ds = d.CreateInput(DType::kFloat32, MakeShape({64}), "s");
  Var dt = d.CreateInput(DType::kFloat32, MakeShape({64}), "t");
  Var c = d.Sub(dx, d.ReduceMean(dx, {-1}, true));
  Var var = d.ReduceMean(d.Mul(c, c), {-1}, true);
  Var y = d.Mul(c, d.Rsqrt(d.Add(var, d.Fill({}, 1e-5))));
  d.MarkOutput(d.Add(d.Mul(y, ds), dt));
  Graph decomposed = Build(d);
  FusedGraph fd = Pipeline(decomposed);
  EXPECT_EQ(fd.groups.size(), 1u) << GroupsString(fd);
  ExpectSameResults(op, decomposed, 1e-5);
}

TEST(Fusion, ResidualAddAndLayerNormAreOneGroup) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4, 64}), "x");
  Var r = b.CreateInput(DType::kFloat32, MakeShape({4, 64}), "residual");
  Var s = b.CreateInput(DType::kFloat32, MakeShape({64}), "s");
  Var t = b.CreateInput(DType::kFloat32, MakeShape({64}), "t");
  Var sum = b.Add(x, r);
  b.MarkOutput(b.LayerNorm(sum, s, t));
  b.MarkOutput(sum);  // the residual stream goes on: written by the same kernel
  FusedGraph f = Pipeline(Build(b));
  EXPECT_EQ(f.groups.size(), 1u) << GroupsString(f);
}

TEST(Fusion, MlpIsTwoOutFusibleGroupsAndAtMostTwoMore) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x");
  Var w1 = b.CreateInput(DType::kFloat32, MakeShape({64, 32}), "w1");
  Var b1 = b.CreateInput(DType::kFloat32, MakeShape({64}), "b1");
  Var w2 = b.CreateInput(DType::kFloat32, MakeShape({32, 64}), "w2");
  Var b2 = b.CreateInput(DType::kFloat32, MakeShape({32}), "b2");
  b.MarkOutput(b.Linear(b.Gelu(b.Linear(x, w1, b1)), w2, b2));
  FusedGraph f = Pipeline(Build(b));
  EXPECT_EQ(CountPattern(f, OpPattern::kOutFusible), 2) << GroupsString(f);
  EXPECT_LE(f.groups.size(), 4u) << GroupsString(f);
  EXPECT_EQ(f.groups.size(), 3u) << GroupsString(f);  // the gelu is its own group
}

TEST(Fusion, EpilogueJoinsTheExternGroupOnlyWhenFlagged) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({32, 16}), "w");
  Var bias = b.CreateInput(DType::kFloat32, MakeShape({16}), "bias");
  b.MarkOutput(b.Relu(b.Add(b.Matmul(b.Relu(x), w), bias)));
  Graph g = Build(b);
  FusedGraph off = Pipeline(g);
  EXPECT_EQ(off.groups.size(), 3u) << GroupsString(off);  // relu | matmul | add+relu
  PassOptions options;
  options.fuse_epilogue_into_extern = true;
  FusedGraph on = Pipeline(g, options);
  ASSERT_EQ(on.groups.size(), 2u) << GroupsString(on);  // relu | matmul+add+relu: no prologue
  EXPECT_EQ(on.groups[1].pattern, OpPattern::kOutFusible);
  EXPECT_EQ(on.graph.nodes()[on.groups[1].master].op, "matmul");
}

TEST(Fusion, OutFusibleBatchNormReluIsTheExternGroupAndOneMore) {
  NetBuilder b;  // matmul stands in for conv2d: [2, 8, 4, 6] x [6, 4] -> NCHW [2, 8, 4, 4]
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 8, 4, 6}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({6, 4}), "w");
  Var p[4];
  for (int i = 0; i < 4; ++i)
    p[i] = b.CreateInput(DType::kFloat32, MakeShape({8}), i == 3 ? "var" : "p" + std::to_string(i));
  b.MarkOutput(b.Relu(b.BatchNorm(b.Matmul(x, w), p[0], p[1], p[2], p[3])));
  FusedGraph f = Pipeline(Build(b));
  EXPECT_EQ(CountPattern(f, OpPattern::kOutFusible), 1) << GroupsString(f);
  EXPECT_EQ(f.groups.size(), 2u) << GroupsString(f);
}

TEST(Fusion, Conv2dBatchNormReluIsTheConvGroupAndAtMostOneMore) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({1, 3, 10, 10}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({4, 3, 3, 3}), "w");
  Var p[4];
  for (int i = 0; i < 4; ++i)
    p[i] = b.CreateInput(DType::kFloat32, MakeShape({4}), i == 3 ? "var" : "p" + std::to_string(i));
  Var conv = b.Op("conv2d", {x, w})[0];
  b.MarkOutput(b.Relu(b.BatchNorm(conv, p[0], p[1], p[2], p[3])));
  FusedGraph f = Pipeline(Build(b));
  EXPECT_EQ(f.graph.nodes()[f.groups[0].master].op, "conv2d") << GroupsString(f);
  EXPECT_LE(f.groups.size(), 2u) << GroupsString(f);
}

TEST(Fusion, AValueReadByTwoGroupsEndsItsGroup) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 8}), "x");
  Var w = b.CreateInput(DType::kFloat32, MakeShape({8, 8}), "w");
  Var e = b.Exp(x);
  b.MarkOutput(b.Add(e, b.Matmul(e, w)));
  FusedGraph f = Pipeline(Build(b));
  EXPECT_EQ(f.groups.size(), 3u) << GroupsString(f);  // exp | matmul | add
}

TEST(Fusion, SymbolicShapesFuseAndKeepResults) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, {Dim::Symbol("n"), Dim::Known(3), Dim::Known(4)}, "x");
  Var p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = b.CreateInput(DType::kFloat32, MakeShape({3}), i == 3 ? "var" : "p" + std::to_string(i));
  }
  b.MarkOutput(b.Softmax(b.Relu(b.BatchNorm(x, p[0], p[1], p[2], p[3]))));
  Graph g = Build(b);
  auto f = RunGraphPasses(g, {});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->groups.size(), 1u) << GroupsString(*f);
  std::vector<HostTensor> inputs;
  for (int v : g.inputs()) {
    bool is_x = g.values()[v].name == "x";
    HostTensor t(DType::kFloat32, is_x ? std::vector<int64_t>{5, 3, 4} : std::vector<int64_t>{3});
    std::uniform_real_distribution<double> dist(0.5, 2.0);
    for (double& e : t.data) e = RoundToDType(dist(Rng()), t.dtype);
    inputs.push_back(std::move(t));
  }
  auto before = RunReference(g, inputs);
  auto after = RunReference(f->graph, inputs);
  ASSERT_TRUE(before.ok() && after.ok()) << before.status() << after.status();
  for (int64_t i = 0; i < (*before)[0].size(); ++i) {
    EXPECT_NEAR((*before)[0].data[i], (*after)[0].data[i], 1e-5);
  }
}

TEST(Fusion, FlagOffGivesOneGroupPerNode) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_fusion = false;
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 32}), "x");
  Var e = b.Exp(b.Sub(x, b.ReduceMax(x, {-1}, true)));
  b.MarkOutput(b.Div(e, b.ReduceSum(e, {1}, true)));
  FusedGraph f = Pipeline(Build(b));
  EXPECT_EQ(f.groups.size(), f.graph.nodes().size());
  EXPECT_EQ(f.groups.size(), 5u);
}

TEST(GraphPasses, DumpWritesEachPassAndTheFusionGroupsAsDot) {
  gflags::FlagSaver saver;
  std::string dir = ::testing::TempDir() + "/cinn_like_graph_dump";
  std::filesystem::remove_all(dir);
  FLAGS_cinn_like_dump_dir = dir;
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 16}), "x");
  b.MarkOutput(b.Gelu(b.Add(x, x)));
  PassOptions options;
  options.dump_name = "mlp";
  Pipeline(Build(b), options);
  auto read = [&](const std::string& file) {
    std::ifstream in(dir + "/" + file);
    EXPECT_TRUE(in.good()) << "missing dump file " << file;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  EXPECT_NE(read("mlp.00_input.txt").find("input x: float32[8, 16]"), std::string::npos);
  for (const char* f :
       {"mlp.01_simplify_batch_norm.txt", "mlp.02_move_reshapes_before_transposes.txt",
        "mlp.03_simplify_reshapes.txt", "mlp.04_simplify_transposes.txt",
        "mlp.05_split_to_slices.txt", "mlp.06_fold_transpose_into_matmul.txt",
        "mlp.07_fold_reshape_into_matmul.txt", "mlp.08_accumulate_index_add_into_sum.txt",
        "mlp.09_common_subexpression_elimination.txt",
        "mlp.10_simplify_constant_attention_masks.txt", "mlp.11_constant_folding.txt",
        "mlp.12_narrow_attention_masks.txt", "mlp.13_dead_code_elimination.txt"}) {
    EXPECT_NE(read(f).find("= gelu("), std::string::npos) << f;
  }
  EXPECT_NE(read("mlp.14_fusion.txt").find("group 0 (broadcast, master gelu): add#0 gelu#1"),
            std::string::npos);
  std::string dot = read("mlp.14_fusion.dot");
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cinn_like::hlir
