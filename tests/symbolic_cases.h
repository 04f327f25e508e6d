/// \file Programs with symbolic sizes, the shapes a framework's dynamic batch and sequence
/// length give: compiled once, called at many sizes (tests/cinn_like/symbolic_shapes_test.cc
/// on x86, tests/gpu/symbolic_gpu_test.cc on CUDA).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cinn_like/compare/call_and_compare.h"
#include "cinn_like/compare/random_inputs.h"
#include "cinn_like/compile.h"
#include "frontend/net_builder.h"
#include "frontend/program.h"
#include "hlir/reference_interpreter.h"

namespace cinn_like::testing {

struct SymbolicCase {
  std::string name;
  frontend::Program program;
  std::vector<std::map<std::string, int64_t>> sizes;  // one call per entry
};

inline hlir::Dim S(const std::string& name) { return hlir::Dim::Symbol(name); }
inline hlir::Dim K(int64_t v) { return hlir::Dim::Known(v); }

/// Batch sizes and sequence lengths: 1, 2, odd sizes, powers of two, up to 512 tokens.
inline std::vector<std::map<std::string, int64_t>> BatchAndSequence() {
  return {{{"s0", 1}, {"s1", 1}},  {{"s0", 2}, {"s1", 3}},   {{"s0", 3}, {"s1", 17}},
          {{"s0", 5}, {"s1", 64}}, {{"s0", 8}, {"s1", 33}},  {{"s0", 1}, {"s1", 512}},
          {{"s0", 13}, {"s1", 2}}, {{"s0", 2}, {"s1", 256}}, {{"s0", 21}, {"s1", 7}},
          {{"s0", 4}, {"s1", 128}}};
}

/// Tokens [s0, s1, 64] viewed as rows [s0*s1, 64]: softmax and a row sum, then viewed back as
/// [s0, s1, 8, 8] through a shape attribute with symbols.
inline SymbolicCase ReshapeRoundTrip() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(hlir::DType::kFloat32, {S("s0"), S("s1"), K(64)}, "x");
  auto rows = b.Op("reshape", {x}, {{"shape", hlir::Shape{S("s0*s1"), K(64)}}})[0];
  auto soft = b.Softmax(b.Relu(rows));
  b.MarkOutput(b.ReduceSum(b.Exp(rows), {1}));
  b.MarkOutput(b.Op("reshape", {soft}, {{"shape", hlir::Shape{S("s0"), S("s1"), K(8), K(8)}}})[0]);
  return {"reshape_round_trip", *b.Build(), BatchAndSequence()};
}

/// An MLP over a dynamic batch: Linear, LayerNorm, GELU, Linear, with a -1 reshape of the
/// batch in between.
inline SymbolicCase Mlp() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(hlir::DType::kFloat32, {S("s0"), K(32)}, "x");
  auto w1 = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({32, 48}), "w1");
  auto b1 = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({48}), "b1");
  auto g = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({48}), "g");
  auto beta = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({48}), "beta");
  auto w2 = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({48, 16}), "w2");
  auto h = b.Add(b.Matmul(x, w1), b1);
  h = b.Gelu(b.LayerNorm(h, g, beta));
  h = b.Reshape(b.Reshape(h, {-1, 6, 8}), {-1, 48});
  b.MarkOutput(b.Matmul(h, w2));
  return {"mlp",
          *b.Build(),
          {{{"s0", 1}},
           {{"s0", 2}},
           {{"s0", 3}},
           {{"s0", 5}},
           {{"s0", 8}},
           {{"s0", 13}},
           {{"s0", 21}},
           {{"s0", 34}},
           {{"s0", 64}},
           {{"s0", 127}}}};
}

/// Attention-like shapes: scores [s0, 4, s1, s1] from q and k, a mask broadcast to a symbolic
/// shape, and a batched matmul with v.
inline SymbolicCase AttentionShapes() {
  frontend::NetBuilder b;
  auto q = b.CreateInput(hlir::DType::kFloat32, {S("s0"), K(4), S("s1"), K(16)}, "q");
  auto k = b.CreateInput(hlir::DType::kFloat32, {S("s0"), K(4), S("s1"), K(16)}, "k");
  auto v = b.CreateInput(hlir::DType::kFloat32, {S("s0"), K(4), S("s1"), K(16)}, "v");
  auto mask = b.CreateInput(hlir::DType::kFloat32, {S("s0"), K(1), K(1), S("s1")}, "mask");
  auto scores = b.Matmul(q, k, false, true);
  auto wide =
      b.Op("broadcast_to", {mask}, {{"shape", hlir::Shape{S("s0"), K(4), S("s1"), S("s1")}}})[0];
  auto p = b.Softmax(b.Add(scores, wide));
  auto out = b.Matmul(p, v);
  b.MarkOutput(b.Reshape(b.Op("transpose", {out}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}})[0],
                         {-1, 64}));
  auto sizes = BatchAndSequence();
  sizes.resize(8);  // the [s0, 4, s1, s1] scores of 512 tokens are slow on the reference
  sizes[5] = {{"s0", 1}, {"s1", 96}};
  return {"attention_shapes", *b.Build(), sizes};
}

/// Column sums (the reduce axis not the contiguous one) over symbolic rows and columns, and
/// over symbolic rows of 64 columns: on the GPU a split into chunks whose last is partial.
inline SymbolicCase ColumnSums() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(hlir::DType::kFloat32, {S("s0"), S("s1")}, "x");
  auto y = b.CreateInput(hlir::DType::kFloat32, {S("s0"), K(64)}, "y");
  b.MarkOutput(b.ReduceSum(x, {0}));
  b.MarkOutput(b.ReduceSum(b.Exp(y), {0}, true));
  return {"column_sums",
          *b.Build(),
          {{{"s0", 1}, {"s1", 1}},
           {{"s0", 2}, {"s1", 300}},
           {{"s0", 15}, {"s1", 7}},
           {{"s0", 16}, {"s1", 257}},
           {{"s0", 17}, {"s1", 64}},
           {{"s0", 100}, {"s1", 33}},
           {{"s0", 1000}, {"s1", 5}},
           {{"s0", 513}, {"s1", 512}}}};
}

/// Rows of symbolic length in every bucket of hlir/row_buckets.h and past the last: softmax
/// in float16 and float32, a layer norm (mean and variance of each row, no weights) of a
/// residual sum, and row reductions, lengths at, just past and between the buckets' bounds.
inline SymbolicCase RowsOfEveryBucket() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(hlir::DType::kFloat16, {S("s0"), S("s1")}, "x");
  auto y = b.CreateInput(hlir::DType::kFloat32, {S("s0"), S("s1")}, "y");
  b.MarkOutput(b.Softmax(x));
  auto r = b.Add(y, b.Exp(y));
  auto centred = b.Sub(r, b.ReduceMean(r, {1}, true));
  auto var = b.ReduceMean(b.Mul(centred, centred), {1}, true);
  b.MarkOutput(b.Mul(centred, b.Rsqrt(b.Add(var, b.Fill({1}, 1e-5)))));
  b.MarkOutput(b.Softmax(y));
  // Row reductions alone and with their own consumer: a float max (its NaN check), a mean
  // kept as a column and not, a float16 sum.
  b.MarkOutput(b.ReduceMax(y, {1}));
  b.MarkOutput(b.ReduceMean(y, {1}));
  b.MarkOutput(b.ReduceMean(b.Exp(y), {1}, true));
  b.MarkOutput(b.ReduceSum(x, {1}));
  return {"rows_of_every_bucket",
          *b.Build(),
          {{{"s0", 3}, {"s1", 1}},
           {{"s0", 9}, {"s1", 7}},
           {{"s0", 2}, {"s1", 128}},
           {{"s0", 17}, {"s1", 129}},
           {{"s0", 5}, {"s1", 512}},
           {{"s0", 1}, {"s1", 513}},
           {{"s0", 4}, {"s1", 1000}},
           {{"s0", 3}, {"s1", 2048}},
           {{"s0", 2}, {"s1", 2049}},
           {{"s0", 9}, {"s1", 5000}}}};
}

inline std::vector<SymbolicCase> SymbolicCases() {
  return {ReshapeRoundTrip(), Mlp(), AttentionShapes(), ColumnSums(), RowsOfEveryBucket()};
}

/// Compiles `c` once for `target` and checks every call of its size list against the reference.
inline void CheckAtEverySize(const testing::SymbolicCase& c, const ir::Target& target,
                             void* stream) {
  auto compiled = CompileProgram(c.program, target, "f");
  ASSERT_TRUE(compiled.ok()) << c.name << ": " << compiled.status();
  auto fn = (*compiled)->Lookup("f");
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto graph = frontend::BuildGraph(c.program);
  ASSERT_TRUE(graph.ok()) << graph.status();
  uint64_t seed = 1;
  for (const auto& sizes : c.sizes) {
    RandomInputOptions o;
    o.sizes = sizes;
    o.seed = seed++;
    std::vector<hlir::HostTensor> inputs = RandomInputs(*graph, o);
    auto want = hlir::RunReference(*graph, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    std::string diffs = CallAndCompare(*fn, target, inputs, *want, c.program.outputs, stream);
    std::string at;
    for (const auto& [s, v] : sizes) at += s + "=" + std::to_string(v) + " ";
    EXPECT_EQ(diffs, "") << c.name << " at " << at;
  }
}

}  // namespace cinn_like::testing
