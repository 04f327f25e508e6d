/// \file index_add at the graph level: the reference interpreter against loops written here
/// (repeated indices accumulate), shape inference, the errors' messages, and the graph pass that
/// lets an index_add into zeros accumulate into the other term of a sum.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "frontend/net_builder.h"
#include "hlir/op.h"
#include "hlir/pass/index_add_accumulate.h"
#include "hlir/reference_interpreter.h"
#include "tests/hlir/run_reference.h"

namespace cinn_like::hlir {
namespace {

using frontend::NetBuilder;
using frontend::Var;
using ::testing::HasSubstr;

TEST(IndexAdd, ReferenceAccumulatesRepeatedIndicesAlongTheAxis) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> value(-2, 2);
  std::uniform_int_distribution<int64_t> row(0, 4);
  // x [3, 5, 2], index [8] into axis 1, updates [3, 8, 2].
  HostTensor x(DType::kFloat64, {3, 5, 2}), index(DType::kInt64, {8}),
      u(DType::kFloat64, {3, 8, 2});
  for (auto& v : x.data) v = value(rng);
  for (auto& v : u.data) v = value(rng);
  for (auto& v : index.data) v = static_cast<double>(row(rng));
  index.data[0] = index.data[7];  // at least one repeat
  NetBuilder b;
  Var xv = b.CreateInput(DType::kFloat64, MakeShape({3, 5, 2}), "x");
  Var iv = b.CreateInput(DType::kInt64, MakeShape({8}), "index");
  Var uv = b.CreateInput(DType::kFloat64, MakeShape({3, 8, 2}), "updates");
  b.MarkOutput(b.IndexAdd(xv, iv, uv, 1));
  auto out = RunProgram(b, {x, index, u});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> want = x.data;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 8; ++k)
      for (int64_t j = 0; j < 2; ++j)
        want[(i * 5 + static_cast<int64_t>(index.data[k])) * 2 + j] += u.data[(i * 8 + k) * 2 + j];
  ASSERT_EQ((*out)[0].shape, (std::vector<int64_t>{3, 5, 2}));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR((*out)[0].data[i], want[i], 1e-12) << i;
}

TEST(IndexAdd, InferenceAndErrorsNameTheOpTheInputAndTheShapes) {
  const OpRegistry& r = OpRegistry::Global();
  TensorDesc x{DType::kFloat32, {Dim::Symbol("n"), Dim::Known(4)}};
  TensorDesc index{DType::kInt32, {Dim::Symbol("k")}};
  TensorDesc u{DType::kFloat32, {Dim::Symbol("k"), Dim::Known(4)}};
  auto ok = r.Infer("index_add", {x, index, u}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].ToString(), "float32[n, 4]");
  EXPECT_EQ((*r.Find("index_add"))->pattern, OpPattern::kReduction);
  auto err = [&](const std::vector<TensorDesc>& in, int64_t axis) {
    auto s = r.Infer("index_add", in, {{"axis", axis}});
    EXPECT_FALSE(s.ok());
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  EXPECT_THAT(err({x, index, u}, 1),
              HasSubstr("op index_add: updates (input 2, float32[k, 4]) must have shape [n, k] "
                        "(x float32[n, 4] with axis 1 of the index's length)"));
  EXPECT_THAT(
      err({x, {DType::kFloat32, {Dim::Symbol("k")}}, u}, 0),
      HasSubstr("op index_add: index (input 1, float32[k]) must have dtype int32 or int64"));
  EXPECT_THAT(err({x, {DType::kInt64, MakeShape({2, 2})}, u}, 0),
              HasSubstr("op index_add: index (input 1, int64[2, 2]) must be a vector (rank 1)"));
  EXPECT_THAT(err({x, index, {DType::kFloat16, u.shape}}, 0),
              HasSubstr("op index_add: updates (input 2, float16[k, 4]) must have x's dtype "
                        "float32; insert a cast"));

  NetBuilder b;
  Var xv = b.CreateInput(DType::kFloat32, MakeShape({3, 2}), "x");
  Var iv = b.CreateInput(DType::kInt64, MakeShape({2}), "index");
  Var uv = b.CreateInput(DType::kFloat32, MakeShape({2, 2}), "updates");
  b.MarkOutput(b.IndexAdd(xv, iv, uv));
  HostTensor idx(DType::kInt64, {2});
  idx.data = {2, 3};
  auto out = RunProgram(
      b, {HostTensor(DType::kFloat32, {3, 2}), idx, HostTensor(DType::kFloat32, {2, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("op index_add: index 3 (at position 1) is out of range [0, 3) of axis 0"));
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

/// Random values for each graph input: floats uniform in [-2, 2], integers (indices) in
/// [0, rows).
std::vector<HostTensor> RandomInputs(const Graph& g, int64_t rows, std::mt19937_64& rng) {
  std::vector<HostTensor> inputs;
  for (int v : g.inputs()) {
    const Value& value = g.values()[v];
    HostTensor t(value.desc.dtype, StaticDims(value.desc.shape));
    std::uniform_real_distribution<double> real(-2, 2);
    std::uniform_int_distribution<int64_t> row(0, rows - 1);
    const bool index = value.desc.dtype == DType::kInt64;
    for (double& x : t.data) x = index ? static_cast<double>(row(rng)) : real(rng);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

TEST(IndexAdd, ASumWithAnIndexAddIntoZerosBecomesOneIndexAddIntoTheOtherTerm) {
  // A tied embedding's weight gradient: the LM head's product plus the lookup's rows added
  // into zeros, in both orders of the sum; then the cases left alone: zeros of 1, an index_add
  // read twice, a term broadcast to the sum's shape.
  NetBuilder b;
  const int64_t vocab = 11, dim = 6, tokens = 9;
  Var grad = b.CreateInput(DType::kFloat32, MakeShape({tokens, vocab}), "grad");
  Var hidden = b.CreateInput(DType::kFloat32, MakeShape({tokens, dim}), "hidden");
  Var ids = b.CreateInput(DType::kInt64, MakeShape({tokens}), "ids");
  Var rows = b.CreateInput(DType::kFloat32, MakeShape({tokens, dim}), "rows");
  Var product = b.Matmul(grad, hidden, /*transpose_x=*/true);  // [vocab, dim]
  Var zeros = b.Fill({vocab, dim}, 0.0);
  b.MarkOutput(b.Add(product, b.IndexAdd(zeros, ids, rows)));
  b.MarkOutput(b.Add(b.IndexAdd(zeros, ids, rows), b.Exp(product)));
  b.MarkOutput(b.Add(product, b.IndexAdd(b.Fill({vocab, dim}, 1.0), ids, rows)));
  Var twice = b.IndexAdd(zeros, ids, rows);
  b.MarkOutput(b.Add(product, twice));
  b.MarkOutput(b.Mul(twice, product));
  Var row = b.CreateInput(DType::kFloat32, MakeShape({dim}), "row");
  b.MarkOutput(b.Add(row, b.IndexAdd(zeros, ids, rows)));
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  auto g = frontend::BuildGraph(*program);
  ASSERT_TRUE(g.ok()) << g.status();
  auto out = AccumulateIndexAddIntoSum(*g);
  ASSERT_TRUE(out.ok()) << out.status();
  // Two of the five sums absorbed their index_add (each now into the other term): three adds
  // and the five index_adds are left.
  EXPECT_EQ(CountOp(*g, "add"), 5);
  EXPECT_EQ(CountOp(*out, "add"), 3);
  EXPECT_EQ(CountOp(*out, "index_add"), 5);
  for (const Node& n : out->nodes()) {
    if (n.op != "index_add") continue;
    const int base = out->values()[n.inputs[0]].producer;
    const std::string base_op = base < 0 ? "input" : out->nodes()[base].op;
    EXPECT_TRUE(base_op == "fill" || base_op == "matmul" || base_op == "exp") << base_op;
  }
  for (size_t o = 0; o < g->outputs().size(); ++o) {
    EXPECT_EQ(out->values()[out->outputs()[o]].name, g->values()[g->outputs()[o]].name);
  }
  // The same sums: float32 bit for bit where both orders add the same two terms (the rows'
  // sum first), within rounding elsewhere; fresh random data with repeated ids.
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<HostTensor> inputs = RandomInputs(*g, vocab, rng);
    auto want = RunReference(*g, inputs);
    auto got = RunReference(*out, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t o = 0; o < want->size(); ++o) {
      for (size_t i = 0; i < (*want)[o].data.size(); ++i) {
        // float32 sums of values up to a few hundred: a few units in the last place.
        const double w = (*want)[o].data[i];
        ASSERT_NEAR((*got)[o].data[i], w, 1e-5 + 1e-6 * std::fabs(w)) << "output " << o << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace cinn_like::hlir
