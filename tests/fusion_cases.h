/// \file Multi-op programs for the fusion tests (tests/hlir on x86 and NVGPU source, tests/gpu
/// on the device): builders for the fused patterns and the seed network, and one runner that
/// compiles a Program through the graph passes and the fused graph compiler, runs it with an
/// Executor on fresh random inputs and compares every output with the reference interpreter.
#pragma once

#include <string>
#include <vector>

#include "frontend/net_builder.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {

using frontend::NetBuilder;
using frontend::Program;

inline Program BiasGelu(const Shape& x_shape, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, x_shape, "x");
  auto bias = b.CreateInput(DType::kFloat32, S({cols}), "bias");
  b.MarkOutput(b.Gelu(b.Add(x, bias)));
  return *b.Build();
}

inline Program SoftmaxProgram(const Shape& x_shape) {
  NetBuilder b;
  b.MarkOutput(b.Softmax(b.CreateInput(DType::kFloat32, x_shape, "x")));
  return *b.Build();
}

/// sum(x, axis) of a float32 [rows, cols] x.
inline Program ReduceRows(int64_t rows, int64_t cols, int axis) {
  NetBuilder b;
  b.MarkOutput(b.ReduceSum(b.CreateInput(DType::kFloat32, S({rows, cols}), "x"), {axis}));
  return *b.Build();
}

/// max and min over the rows and over the columns of sqrt(x + 1.99), x [rows, cols] of kUniform
/// floats in [-2, 2]: NaN where x < -1.99, one element in 400, so that some rows and columns
/// hold no NaN, some one, some several (the reductions keep a NaN: ir/math.h maximum).
inline Program ExtremesOfRareNaNs(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto y = b.Sqrt(b.Add(x, b.Fill({cols}, 1.99)));
  for (int64_t axis : {1, 0}) {
    b.MarkOutput(b.ReduceMax(y, {axis}));
    b.MarkOutput(b.ReduceMin(y, {axis}));
  }
  return *b.Build();
}

/// A training forward's dropout: the mask drawn from a seed (7) and returned (the
/// backward reads it), the dropped product added to the residual stream, both returned.
inline Program DropoutResidual(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto residual = b.CreateInput(DType::kFloat32, S({rows, cols}), "residual");
  auto seed = b.Fill({1}, 7, DType::kInt64);
  auto u = b.Op("random_uniform", {seed},
                {{"shape", std::vector<int64_t>{rows, cols}}, {"stream", int64_t{3}}})[0];
  auto mask = b.Less(u, b.Fill({1}, 0.9));
  auto dropped = b.Mul(b.Where(mask, x, b.Fill({1}, 0.0)), b.Fill({1}, 1.0 / 0.9));
  b.MarkOutput(mask);
  b.MarkOutput(b.Add(residual, dropped));
  return *b.Build();
}

/// Embedding gradients, a table of [vocab, width] and `tokens` lookups of rows (index i * 7 mod
/// vocab: repeated where tokens > vocab): a tied embedding's (the lookups' gradient rows added
/// into the output layer's weight gradient, the product g^T h of [tokens, vocab] and [tokens,
/// width]), an untied one's (added into zeros), and one whose product is also summed by
/// columns (read by another op, so the addition must not overwrite it).
inline Program EmbeddingGradients(int64_t vocab, int64_t width, int64_t tokens) {
  NetBuilder b;
  auto g = b.CreateInput(DType::kFloat32, S({tokens, vocab}), "g");
  auto h = b.CreateInput(DType::kFloat32, S({tokens, width}), "h");
  auto rows = b.CreateInput(DType::kFloat32, S({tokens, width}), "rows");
  auto ids = b.Mod(b.Mul(b.Arange(0, tokens), b.Fill({1}, 7, DType::kInt64)),
                   b.Fill({1}, vocab, DType::kInt64));
  b.MarkOutput(b.IndexAdd(b.Matmul(g, h, /*transpose_x=*/true), ids, rows));
  b.MarkOutput(b.IndexAdd(b.Fill({vocab, width}, 0.0), ids, rows));
  auto shared = b.Matmul(g, b.Tanh(h), /*transpose_x=*/true);
  b.MarkOutput(b.IndexAdd(shared, ids, rows));
  b.MarkOutput(b.ReduceSum(shared, {0}));
  return *b.Build();
}

/// y = x + bias, [rows, cols], returned, and tanh of y reshaped to [2, rows / 2, cols] (rows
/// even), returned: a value returned as it is and read, through a reshape, by a neighbour (a
/// matmul's product a training graph saves for its activation's backward).
inline Program ReturnedAndReshapedForItsReader(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto bias = b.CreateInput(DType::kFloat32, S({cols}), "bias");
  auto y = b.Add(x, bias);
  b.MarkOutput(y);
  b.MarkOutput(b.Tanh(b.Reshape(y, {2, rows / 2, cols})));
  return *b.Build();
}

/// 2 * sum(x, axis=1) of a float32 [rows, cols] x: a row reduction whose consumer reads
/// nothing else.
inline Program ScaledRowSum(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto sum = b.ReduceSum(b.CreateInput(DType::kFloat32, S({rows, cols}), "x"), {1});
  b.MarkOutput(b.Mul(sum, b.Fill({rows}, 2.0)));
  return *b.Build();
}

inline Program LayerNormProgram(const Shape& x_shape, int64_t cols, bool residual) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, x_shape, "x");
  auto gamma = b.CreateInput(DType::kFloat32, S({cols}), "gamma");
  auto beta = b.CreateInput(DType::kFloat32, S({cols}), "beta");
  if (residual) x = b.Add(x, b.CreateInput(DType::kFloat32, x_shape, "residual"));
  b.MarkOutput(b.LayerNorm(x, gamma, beta));
  return *b.Build();
}

/// A LayerNorm as PyTorch's decomposition writes it for training, its row statistics outputs
/// beside y (the backward reads them): mean, rstd = rsqrt(var + eps), y = (x - mean) * rstd *
/// gamma + beta, over rows of `cols` elements.
inline Program LayerNormWithStatistics(const Shape& rows, int64_t cols) {
  NetBuilder b;
  Shape x_shape = rows;
  x_shape.push_back(Dim::Known(cols));
  const int64_t axis = static_cast<int64_t>(rows.size());
  auto x = b.CreateInput(DType::kFloat32, x_shape, "x");
  auto gamma = b.CreateInput(DType::kFloat32, S({cols}), "gamma");
  auto beta = b.CreateInput(DType::kFloat32, S({cols}), "beta");
  auto mean = b.ReduceMean(x, {axis}, /*keepdim=*/true);
  auto centered = b.Sub(x, mean);
  auto var = b.ReduceMean(b.Mul(centered, centered), {axis}, /*keepdim=*/true);
  auto rstd = b.Rsqrt(b.Add(var, b.Fill({1}, 1e-5)));
  b.MarkOutput(b.Add(b.Mul(b.Mul(centered, rstd), gamma), beta));
  b.MarkOutput(mean);
  b.MarkOutput(rstd);
  return *b.Build();
}

/// A LayerNorm backward's weight and bias gradients, column sums over `rows` rows of `cols`
/// (dgamma = sum(dy * (x - mean) * rstd), dbeta = sum(dy)), independent of each other: on GPUs
/// their partials and their final sums pair up into one kernel each (GroupIndependentNests).
/// Beside them, a column sum of the same launch shapes that must not join them: it reads dbeta
/// (its partials come after dbeta's final sum).
inline Program LayerNormWeightGradients(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto dy = b.CreateInput(DType::kFloat32, S({rows, cols}), "dy");
  auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto mean = b.CreateInput(DType::kFloat32, S({rows, 1}), "mean");
  auto rstd = b.CreateInput(DType::kFloat32, S({rows, 1}), "rstd");
  auto xhat = b.Mul(b.Sub(x, mean), rstd);
  auto dbeta = b.ReduceSum(dy, {0});
  b.MarkOutput(b.ReduceSum(b.Mul(dy, xhat), {0}));
  b.MarkOutput(dbeta);
  b.MarkOutput(b.ReduceSum(b.Mul(dy, dbeta), {0}));
  return *b.Build();
}

/// Row groups the register tactic must leave to the others (their reads of the row are not
/// one contiguous share per thread): a layer_norm over two dims, a mean over two dims, and
/// softmaxes of two slices of one row (two offsets; a stride).
inline std::vector<Program> RowsNotHeldInRegisters() {
  std::vector<Program> out;
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({8, 4, 64}), "x");
    auto gamma = b.CreateInput(DType::kFloat32, S({4, 64}), "gamma");
    auto beta = b.CreateInput(DType::kFloat32, S({4, 64}), "beta");
    b.MarkOutput(b.LayerNorm(x, gamma, beta, /*axis=*/1));
    out.push_back(*b.Build());
  }
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({8, 4, 64}), "x");
    b.MarkOutput(b.Mul(b.ReduceMean(x, {1, 2}, /*keepdim=*/true), x));
    out.push_back(*b.Build());
  }
  for (bool strided : {false, true}) {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({64, 1024}), "x");
    auto lo = b.Slice(x, {1}, {0}, {512});
    auto other = strided ? b.Slice(x, {1}, {0}, {1024}, {2}) : b.Slice(x, {1}, {512}, {1024});
    b.MarkOutput(b.Softmax(b.Mul(lo, other)));
    out.push_back(*b.Build());
  }
  return out;
}

/// conv 3x3 (pad 1) with `oc` output channels, batch_norm with its parameters as graph inputs,
/// relu (the seed network at 1x3x224x224, 16 channels).
inline Program ConvBnRelu(int64_t n, int64_t c, int64_t hw, int64_t oc) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({n, c, hw, hw}), "x");
  auto w = b.CreateInput(DType::kFloat32, S({oc, c, 3, 3}), "w");
  auto scale = b.CreateInput(DType::kFloat32, S({oc}), "scale");
  auto bias = b.CreateInput(DType::kFloat32, S({oc}), "bias");
  auto mean = b.CreateInput(DType::kFloat32, S({oc}), "mean");
  auto var = b.CreateInput(DType::kFloat32, S({oc}), "var");
  auto y = b.Conv2d(x, w, {1, 1}, {1, 1});
  b.MarkOutput(b.Relu(b.BatchNorm(y, scale, bias, mean, var)));
  return *b.Build();
}

/// A conv2d whose weight is a constant (the flipped window PyTorch's avg_pool backward makes,
/// folded to a constant op) and whose input is a transpose, and a matmul of a transpose: the
/// extern calls read their inputs stored, never inlined.
inline Program ExternsOfConstantAndTransposedInputs() {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({1, 1, 8, 6}), "x");
  auto w = b.Gather(b.Transpose(b.Fill({1, 1, 1, 3}, 0.5), {0, 2, 1, 3}), b.Arange(2, -1, -1), 3);
  b.MarkOutput(b.Relu(b.Conv2d(b.Transpose(b.Relu(x), {0, 1, 3, 2}), w)));
  auto m = b.CreateInput(DType::kFloat32, S({5, 7}), "m");
  b.MarkOutput(b.Matmul(b.Transpose(b.Exp(m), {1, 0}), m));
  return *b.Build();
}

/// s = x + y ([4, 8, 16], an output) read as [32, 16] by a matmul summing over its rows (read
/// transposed, so no reshape folds into it) and by a column sum. The library call reads s's
/// buffer (OpDef::extern_reads_data_only): no kernel copies s into a [32, 16] buffer.
inline Program MatmulOfAReshape() {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({4, 8, 16}), "x");
  auto y = b.CreateInput(DType::kFloat32, S({4, 8, 16}), "y");
  auto w = b.CreateInput(DType::kFloat32, S({32, 12}), "w");
  auto s = b.Add(x, y);
  auto rows = b.Reshape(s, {32, 16});
  b.MarkOutput(s);
  b.MarkOutput(b.Matmul(rows, w, /*transpose_x=*/true));
  b.MarkOutput(b.ReduceSum(rows, {0}));
  return *b.Build();
}

/// x[5, 3] gathered along axis 0 by an int64 index vector of 4 ("i"), times 2.
inline Program GatherTimesTwo() {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({5, 3}), "x");
  auto i = b.CreateInput(DType::kInt64, S({4}), "i");
  b.MarkOutput(b.Mul(b.Gather(x, i, 0), b.Fill({4, 3}, 2.0)));
  return *b.Build();
}

/// out = relu(tanh(exp(x + y)) - y) over x[n, 5] and y[5]; instruction 2 is tanh (the
/// self-check tests plant failures there).
inline Program TanhChain() {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, Shape{Dim::Symbol("n"), Dim::Known(5)}, "x");
  auto y = b.CreateInput(DType::kFloat32, S({5}), "y");
  auto t = b.Tanh(b.Exp(b.Add(x, y)));
  b.MarkOutput(b.Relu(b.Sub(t, y)));
  return *b.Build();
}

/// A residual add and the RMSNorm after it, as a training forward under autocast has them: the
/// sum of the residual (returned), rsqrt of the row's mean square (returned: the backward
/// reads it), and the normalized row times the weight, cast to `out` (bfloat16: the next
/// matmul's operand). Of the group's two stored stages one holds an element per row.
inline Program RmsNormWithSavedRsqrt(int64_t rows, int64_t cols, DType out = DType::kBFloat16) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto h = b.CreateInput(DType::kFloat32, S({rows, cols}), "h");
  auto w = b.CreateInput(DType::kFloat32, S({cols}), "w");
  auto sum = b.Add(x, h);
  auto rsqrt =
      b.Rsqrt(b.Add(b.ReduceMean(b.Mul(sum, sum), {1}, /*keepdim=*/true), b.Fill({1}, 1e-6)));
  b.MarkOutput(sum);
  b.MarkOutput(rsqrt);
  b.MarkOutput(b.Cast(b.Mul(b.Mul(sum, rsqrt), w), out));
  return *b.Build();
}

/// Two ConvNeXt blocks in float32 on x [2, c, h, w]: depthwise 7x7 conv with a bias -> permute
/// to NHWC -> LayerNorm over the channels -> permute back -> * layer scale [c, 1, 1] -> + the
/// block's input (hlir/pass/conv_layout.h runs them channels last on GPUs).
inline Program ConvNextBlocks(int64_t c, int64_t h, int64_t w) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({2, c, h, w}), "x");
  for (int i = 0; i < 2; ++i) {
    auto in = [&](const std::string& name, const std::vector<int64_t>& dims) {
      return b.CreateInput(DType::kFloat32, hlir::MakeShape(dims), name + std::to_string(i));
    };
    auto conv = b.Op("conv2d", {x, in("w", {c, 1, 7, 7}), in("bias", {c})},
                     {{"groups", c}, {"paddings", std::vector<int64_t>{3, 3}}})[0];
    auto n =
        b.LayerNorm(b.Transpose(conv, {0, 2, 3, 1}), in("gamma", {c}), in("beta", {c}), -1, 1e-6);
    x = b.Add(b.Mul(b.Transpose(n, {0, 3, 1, 2}), in("scale", {c, 1, 1})), x);
  }
  b.MarkOutput(x);
  return *b.Build();
}

/// Pre-norm residual steps, as a training forward has them (two by default): s1 = x + a
/// (returned) is read by its RMSNorm and by s2 = s1 + c (returned), which its own RMSNorm reads,
/// and so on (each step adds an input); each norm returns its rsqrt and its normalized row times
/// w, cast to bfloat16. Each sum but the last is read by two groups. Without `sums_returned`, as
/// inference has them.
inline Program PreNormResidualChain(int64_t rows, int64_t cols, bool sums_returned = true,
                                    int steps = 2) {
  NetBuilder b;
  auto s = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto w = b.CreateInput(DType::kFloat32, S({cols}), "w");
  for (int i = 0; i < steps; ++i) {
    s = b.Add(s, b.CreateInput(DType::kFloat32, S({rows, cols}), "a" + std::to_string(i)));
    if (sums_returned) b.MarkOutput(s);
    auto rsqrt =
        b.Rsqrt(b.Add(b.ReduceMean(b.Mul(s, s), {1}, /*keepdim=*/true), b.Fill({1}, 1e-6)));
    b.MarkOutput(rsqrt);
    b.MarkOutput(b.Cast(b.Mul(b.Mul(s, rsqrt), w), DType::kBFloat16));
  }
  return *b.Build();
}

/// An RMSNorm of a residual sum's halves swapped (rotate-half), the sum returned: the norm reads
/// each row's elements at other columns than its own, so a thread storing the sum's elements
/// would not be the one that reads them back.
inline Program RmsNormOfASwappedSum(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto h = b.CreateInput(DType::kFloat32, S({rows, cols}), "h");
  auto sum = b.Add(x, h);
  b.MarkOutput(sum);
  auto swapped =
      b.Concat({b.Slice(sum, {1}, {cols / 2}, {cols}), b.Slice(sum, {1}, {0}, {cols / 2})}, 1);
  auto rsqrt = b.Rsqrt(
      b.Add(b.ReduceMean(b.Mul(swapped, swapped), {1}, /*keepdim=*/true), b.Fill({1}, 1e-6)));
  b.MarkOutput(b.Mul(swapped, rsqrt));
  return *b.Build();
}

/// GELU's tanh form and its gradient as the decompositions write them: tanh(u) read three
/// times and pow(x, 3) inside u, pow(x, 2) in u's derivative (the C printers compute each repeat
/// once, the simplifier makes the powers products).
inline Program GeluTanhBackward(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
  auto g = b.CreateInput(DType::kFloat32, S({rows, cols}), "g");
  auto c = [&](double v) { return b.Fill({1}, v, DType::kFloat32); };
  auto u = b.Mul(b.Add(x, b.Mul(b.Pow(x, c(3)), c(0.044715))), c(0.7978845608));
  auto t = b.Tanh(u);
  auto du = b.Mul(b.Add(c(1), b.Mul(b.Pow(x, c(2)), c(3 * 0.044715))), c(0.7978845608));
  auto half_x = b.Mul(x, c(0.5));
  auto dt = b.Mul(b.Sub(c(1), b.Mul(t, t)), du);
  b.MarkOutput(b.Add(b.Mul(b.Mul(g, half_x), dt), b.Mul(b.Mul(g, c(0.5)), b.Add(t, c(1)))));
  b.MarkOutput(b.Mul(half_x, b.Add(t, c(1))));
  return *b.Build();
}

/// int8 x[a, b, c] and bias[c]: add(relu(x), bias), reduce_max over c, reduce_min over a.
/// With a * b * c past 2^31 - 1 it is lowered with 64-bit indices.
inline Program WideInt8(int64_t a, int64_t b, int64_t c) {
  NetBuilder nb;
  auto x = nb.CreateInput(DType::kInt8, S({a, b, c}), "x");
  auto bias = nb.CreateInput(DType::kInt8, S({c}), "bias");
  nb.MarkOutput(nb.Add(nb.Relu(x), bias));
  nb.MarkOutput(
      nb.Op("reduce_max", {x}, {{"axes", std::vector<int64_t>{2}}, {"keepdim", false}})[0]);
  nb.MarkOutput(
      nb.Op("reduce_min", {x}, {{"axes", std::vector<int64_t>{0}}, {"keepdim", false}})[0]);
  return *nb.Build();
}

inline Program Mlp(int64_t rows, int64_t in, int64_t hidden, int64_t out) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({rows, in}), "x");
  auto w1 = b.CreateInput(DType::kFloat32, S({hidden, in}), "w1");
  auto b1 = b.CreateInput(DType::kFloat32, S({hidden}), "b1");
  auto w2 = b.CreateInput(DType::kFloat32, S({out, hidden}), "w2");
  auto b2 = b.CreateInput(DType::kFloat32, S({out}), "b2");
  b.MarkOutput(b.Linear(b.Gelu(b.Linear(x, w1, b1)), w2, b2));
  return *b.Build();
}

/// Two independent groups, a heavy one and a light one: an [n, n] x [n, n] product and relu
/// over 64 floats (the group report's tests: the product's group is listed first).
inline Program HeavyAndLight(int64_t n = 384) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({n, n}), "x");
  auto w = b.CreateInput(DType::kFloat32, S({n, n}), "w");
  auto v = b.CreateInput(DType::kFloat32, S({64}), "v");
  b.MarkOutput(b.Matmul(x, w));
  b.MarkOutput(b.Relu(v));
  return *b.Build();
}

/// The graph passes (fusion as FLAGS_cinn_like_fusion says) and the fused graph compiler.
inline absl::StatusOr<ir::Module> CompileProgramModule(const Program& program,
                                                       const ir::Target& target,
                                                       const std::string& name) {
  auto graph = frontend::BuildGraph(program);
  if (!graph.ok()) return graph.status();
  auto fused = hlir::RunGraphPasses(*graph, hlir::TargetPassOptions(target, name, &*graph));
  if (!fused.ok()) return fused.status();
  return hlir::CompileFusedGraph(*fused, target, name);
}

/// The gradient of a cross-entropy's logits as PyTorch's decompositions write it: a one-hot of
/// the targets scaled by the incoming gradient, read by its row sum and by the gradient, which
/// ends in a reshape (so the sum cannot join the gradient's group).
inline Program CrossEntropyBackward(int64_t rows, int64_t classes) {
  NetBuilder b;
  auto target = b.CreateInput(DType::kInt64, S({rows}), "target");
  auto logp = b.CreateInput(DType::kFloat32, S({rows, classes}), "logp");
  auto g = b.CreateInput(DType::kFloat32, S({rows, 1}), "g");
  auto hot = b.Equal(b.Reshape(target, {rows, 1}), b.Reshape(b.Arange(0, classes), {1, classes}));
  auto scaled = b.Mul(b.Cast(hot, DType::kFloat32), g);
  auto sum = b.ReduceSum(scaled, {1}, /*keepdim=*/true);
  auto grad = b.Sub(scaled, b.Mul(b.Exp(logp), sum));
  b.MarkOutput(b.Reshape(grad, {2, rows / 2, classes}));
  return *b.Build();
}

/// A causal language model's cross-entropy forward as PyTorch's decompositions write it for a
/// training graph: the logits of [2, tokens, classes] shifted (all tokens but the last) and
/// viewed as rows, the row max and the log of the sum of exponentials saved for the backward
/// (outputs), and the mean loss, which gathers each row's `x - max - log(sum)` at its target
/// (flattened, as `aten.gather` lowers; the targets drawn are taken modulo `classes`).
inline Program CrossEntropyForward(int64_t tokens, int64_t classes) {
  NetBuilder b;
  const int64_t rows = 2 * (tokens - 1);
  auto logits = b.CreateInput(DType::kFloat32, S({2, tokens, classes}), "logits");
  auto drawn = b.CreateInput(DType::kInt64, S({rows}), "target");
  auto target = b.Mod(b.Abs(drawn), b.Fill({1}, static_cast<double>(classes), DType::kInt64));
  auto x = b.Reshape(b.Slice(logits, {1}, {0}, {tokens - 1}), {rows, classes});
  auto max = b.ReduceMax(x, {1}, /*keepdim=*/true);
  auto shifted = b.Sub(x, max);
  auto log_sum = b.Log(b.ReduceSum(b.Exp(shifted), {1}, /*keepdim=*/true));
  auto logp = b.Sub(shifted, log_sum);
  auto at = b.Add(
      b.Mul(b.Arange(0, rows), b.Fill({1}, static_cast<double>(classes), DType::kInt64)), target);
  auto picked = b.Gather(b.Reshape(logp, {rows * classes}), at, 0);
  auto loss = b.Div(b.ReduceSum(b.Neg(picked), {0}, /*keepdim=*/true),
                    b.Fill({1}, static_cast<double>(rows)));
  b.MarkOutput(max);
  b.MarkOutput(log_sum);
  b.MarkOutput(loss);
  return *b.Build();
}

/// How many times `what` occurs in `text` (library calls in a tactics dump, say).
inline size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// Compiles `program` for `target`, runs it with `exec` on fresh random inputs (variance-like
/// inputs named "var" positive) and compares every output with the reference interpreter
/// (|got - want| <= tol + tol * max(|want|, reference on |inputs|); 1e-4 by default).
inline void RunProgramCase(const Program& program, const ir::Target& target, const Executor& exec,
                           double tol = 1e-4) {
  auto graph = frontend::BuildGraph(program);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = CompileProgramModule(program, target, "fused");
  ASSERT_TRUE(module.ok()) << module.status();
  static std::random_device rd;
  uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::unique_ptr<TypedTensor>> owned;
  std::vector<TypedTensor*> args;
  std::vector<hlir::HostTensor> ref_in, abs_in;
  for (int v : graph->inputs()) {
    const hlir::Value& value = graph->values()[v];
    std::vector<int64_t> dims = Concrete(value.desc.shape);
    owned.push_back(std::make_unique<TypedTensor>(hlir::ToIrType(value.desc.dtype), dims));
    FillDomain(*owned.back(), value.name == "var" ? Domain::kPositive : Domain::kUniform, rng);
    hlir::HostTensor h(value.desc.dtype, dims);
    for (int64_t k = 0; k < h.size(); ++k) h.data[k] = owned.back()->Get(k);
    ref_in.push_back(h);
    for (double& x : h.data) x = std::fabs(x);
    abs_in.push_back(h);
    args.push_back(owned.back().get());
  }
  auto want = hlir::RunReference(*graph, ref_in);
  ASSERT_TRUE(want.ok()) << want.status();
  auto scale = hlir::RunReference(*graph, abs_in);
  ASSERT_TRUE(scale.ok()) << scale.status();
  for (const hlir::HostTensor& w : *want) {
    owned.push_back(std::make_unique<TypedTensor>(hlir::ToIrType(w.dtype), w.shape));
    for (int64_t k = 0; k < w.size(); ++k) owned.back()->Set(k, -12345);  // poison
    args.push_back(owned.back().get());
  }
  exec(*module, args);
  if (::testing::Test::HasFatalFailure()) return;
  for (size_t o = 0; o < want->size(); ++o) {
    const hlir::HostTensor& w = (*want)[o];
    const TypedTensor& got = *args[graph->inputs().size() + o];
    int bad = 0;
    for (int64_t k = 0; k < w.size() && bad < 5; ++k) {
      double g = got.Get(k), e = w.data[k];
      double s = std::max(std::fabs(e), std::fabs((*scale)[o].data[k]));
      if (!(std::fabs(g - e) <= tol + tol * s) && !(std::isnan(g) && std::isnan(e))) {
        ++bad;
        ADD_FAILURE() << "output " << o << " element " << k << ": got " << g << ", want " << e;
      }
    }
  }
}

}  // namespace cinn_like::testing
