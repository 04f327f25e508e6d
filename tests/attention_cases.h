/// \file Attention checks shared by the x86 test (tests/hlir/attention_test.cc) and the GPU test
/// (tests/gpu/attention_gpu_test.cc): rows whose keys are all masked (out 0, logsumexp +inf,
/// in the reference and in the compiled code), a banded mask whose tiles outside the band drop
/// every key, the larger cases that walk several query
/// and key tiles of the fused GPU kernel in each head-dim bucket, and dropout's mask as the one
/// random_uniform draws (what a backward draws again).
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {

/// Runs `module` with `exec` on `in` beside the reference interpreter's run of `graph`: the
/// arguments (inputs, then outputs poisoned with -1, as the executor left them), and the
/// reference's outputs in `*want`; empty where the reference fails.
inline std::vector<std::unique_ptr<TypedTensor>> RunBesideReference(
    const hlir::Graph& graph, const ir::Module& module, const std::vector<hlir::HostTensor>& in,
    const Executor& exec, std::vector<hlir::HostTensor>* want) {
  auto ref = hlir::RunReference(graph, in);
  EXPECT_TRUE(ref.ok()) << ref.status();
  if (!ref.ok()) return {};
  *want = *ref;
  std::vector<std::unique_ptr<TypedTensor>> owned;
  std::vector<TypedTensor*> args;
  const std::vector<hlir::HostTensor>* results = want;
  for (const auto* tensors : {&in, results}) {
    for (const hlir::HostTensor& h : *tensors) {
      owned.push_back(std::make_unique<TypedTensor>(hlir::ToIrType(h.dtype), h.shape));
      for (int64_t k = 0; k < h.size(); ++k) owned.back()->Set(k, tensors == &in ? h.data[k] : -1);
      args.push_back(owned.back().get());
    }
  }
  exec(module, args);
  return owned;
}

/// Attention under a padding mask as Hugging Face's BERT builds it in the traced graph: a keep
/// test of each key (keep > -1.5, [B, S] reshaped to [B, 1, 1, S]; one key in eight dropped),
/// and-ed with a [1, 1, S, 1] test of each query that holds everywhere (a bool fill), broadcast
/// to [B, 1, S, S], turned into 0 / -inf by a where: attention(q [B, 4, S, 16], k, v, that
/// mask), both outputs returned.
inline frontend::Program PaddingMaskAttention(int64_t batch, int64_t seq) {
  frontend::NetBuilder b;
  auto q = b.CreateInput(DType::kFloat32, S({batch, 4, seq, 16}), "q");
  auto k = b.CreateInput(DType::kFloat32, S({batch, 4, seq, 16}), "k");
  auto v = b.CreateInput(DType::kFloat32, S({batch, 4, seq, 16}), "v");
  auto keep = b.CreateInput(DType::kFloat32, S({batch, seq}), "keep");
  auto keys = b.Reshape(b.Greater(keep, b.Fill({1}, -1.5)), {batch, 1, 1, seq});
  auto both = b.LogicalAnd(b.Fill({1, 1, seq, 1}, 1.0, DType::kBool), keys);
  auto mask =
      b.Where(b.BroadcastTo(both, {batch, 1, seq, seq}), b.Fill({1}, 0.0), b.Fill({1}, -INFINITY));
  for (const auto& o : b.Op("attention", {q, k, v, mask}, {{"scale", 0.25}})) b.MarkOutput(o);
  return *b.Build();
}

/// Attention as Hugging Face's layers lay it out: q [B, S, H * D], k and v [B, S, Hkv * D]
/// inputs viewed as [B, S, heads, D] and transposed to [B, heads, S, D]; where Hkv < H, k and v
/// expanded to H heads as repeat_kv does (k: reshape to [B, Hkv, 1, S, D], broadcast_to, reshape;
/// v: viewed [B, 1, S, Hkv, D] and transposed to [B, Hkv, 1, S, D] by one rank-5 transpose, as
/// the traced graph has it); with `padded`, BERT's padding mask ([B, S] keep > -1.5 as a
/// [B, 1, 1, S] 0 / -inf mask of `dtype`); the output transposed back and viewed as
/// [B, S, H * D], the one output. hlir/pass/attention_layout.h folds every layout change.
inline frontend::Program HfLayoutAttention(DType dtype, int64_t batch, int64_t seq, int64_t heads,
                                           int64_t kv_heads, int64_t dim, bool padded,
                                           bool causal) {
  frontend::NetBuilder b;
  auto heads_of = [&](const frontend::Var& x, int64_t h) {
    return b.Transpose(b.Reshape(x, {batch, seq, h, dim}), {0, 2, 1, 3});
  };
  auto q = heads_of(b.CreateInput(dtype, S({batch, seq, heads * dim}), "q"), heads);
  auto k_in = b.CreateInput(dtype, S({batch, seq, kv_heads * dim}), "k");
  auto v_in = b.CreateInput(dtype, S({batch, seq, kv_heads * dim}), "v");
  frontend::Var k = heads_of(k_in, kv_heads), v;
  if (kv_heads == heads) {
    v = heads_of(v_in, kv_heads);
  } else {
    const int64_t group = heads / kv_heads;
    k = b.Reshape(b.BroadcastTo(b.Reshape(k, {batch, kv_heads, 1, seq, dim}),
                                {batch, kv_heads, group, seq, dim}),
                  {batch, heads, seq, dim});
    auto v5 = b.Transpose(b.Reshape(v_in, {batch, 1, seq, kv_heads, dim}), {0, 3, 1, 2, 4});
    v = b.Reshape(b.BroadcastTo(v5, {batch, kv_heads, group, seq, dim}), {batch, heads, seq, dim});
  }
  std::vector<frontend::Var> operands{q, k, v};
  if (padded) {
    auto keep = b.CreateInput(DType::kFloat32, S({batch, seq}), "keep");
    auto keys = b.Reshape(b.Greater(keep, b.Fill({1}, -1.5)), {batch, 1, 1, seq});
    operands.push_back(b.Where(keys, b.Fill({1}, 0.0, dtype), b.Fill({1}, -INFINITY, dtype)));
  }
  auto made = b.Op("attention", operands,
                   {{"scale", 1 / std::sqrt(static_cast<double>(dim))}, {"causal", causal}});
  b.MarkOutput(b.Reshape(b.Transpose(made[0], {0, 2, 1, 3}), {batch, seq, heads * dim}));
  return *b.Build();
}

/// GPT-2's causal self-attention: q, k and v sliced from one [B, S, 3 H D] projection input
/// (split_to_slices' form of its split), each viewed [B, S, H, D] and transposed; the output
/// transposed back and viewed as [B, S, H * D], the one output.
inline frontend::Program PackedQkvAttention(DType dtype, int64_t batch, int64_t seq, int64_t heads,
                                            int64_t dim) {
  frontend::NetBuilder b;
  const int64_t width = heads * dim;
  auto qkv = b.CreateInput(dtype, S({batch, seq, 3 * width}), "qkv");
  std::vector<frontend::Var> operands;
  for (int64_t part = 0; part < 3; ++part) {
    auto sliced = b.Slice(qkv, {2}, {part * width}, {(part + 1) * width});
    operands.push_back(b.Transpose(b.Reshape(sliced, {batch, seq, heads, dim}), {0, 2, 1, 3}));
  }
  auto made = b.Op("attention", operands,
                   {{"scale", 1 / std::sqrt(static_cast<double>(dim))}, {"causal", true}});
  b.MarkOutput(b.Reshape(b.Transpose(made[0], {0, 2, 1, 3}), {batch, seq, width}));
  return *b.Build();
}

/// attention(q [1, 2, 4, 8], k, v [1, 1, 6, 8], mask bool [4, 6]) where query rows 1 and 3
/// keep no key (row 3 also through causal: it keeps only keys 4 and 5, which are after it):
/// compiled for the executor's target, both outputs compared with the reference, and the
/// masked rows exactly 0 and +inf.
inline void CheckFullyMaskedRows(const ir::Target& target, const Executor& exec) {
  OpCase c{"attention",
           {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kBool},
           {S({1, 2, 4, 8}), S({1, 1, 6, 8}), S({1, 1, 6, 8}), S({4, 6})},
           {{"causal", true}},
           {}};
  auto graph = CaseGraph(c);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, target, "masked_rows");
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> uniform(-2, 2);
  std::vector<hlir::HostTensor> in;
  for (size_t i = 0; i < 3; ++i) {
    in.emplace_back(c.dtypes[i], Concrete(c.shapes[i]));
    for (double& x : in.back().data) x = hlir::RoundToDType(uniform(rng), DType::kFloat32);
  }
  in.emplace_back(DType::kBool, std::vector<int64_t>{4, 6});
  in.back().data = {1, 1, 0, 1, 0, 0,   // row 0 (causal: key 0 only)
                    0, 0, 0, 0, 0, 0,   // row 1: no key
                    0, 1, 1, 0, 0, 0,   // row 2
                    0, 0, 0, 0, 1, 1};  // row 3: keys after the row only
  std::vector<hlir::HostTensor> want;
  auto args = RunBesideReference(*graph, *module, in, exec, &want);
  if (::testing::Test::HasFatalFailure() || args.empty()) return;
  const TypedTensor &out = *args[4], &lse = *args[5];
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t row = h * 4 + i;
      SCOPED_TRACE("head " + std::to_string(h) + " row " + std::to_string(i));
      const bool masked = i == 1 || i == 3;
      if (masked) {
        EXPECT_EQ(want[1].data[row], INFINITY);
        EXPECT_EQ(lse.Get(row), INFINITY);
      } else {
        EXPECT_NEAR(lse.Get(row), want[1].data[row], 1e-5);
      }
      for (int64_t e = 0; e < 8; ++e) {
        const double w = want[0].data[row * 8 + e];
        if (masked) EXPECT_EQ(w, 0.0);
        EXPECT_NEAR(out.Get(row * 8 + e), w, masked ? 0.0 : 1e-5);
      }
    }
  }
}

/// attention whose mask keeps only a band of keys per query row (keys i + 40 .. i + 119, a
/// random bias on them where the mask is a float) and none of row 7 and rows 128 .. 191 (a whole
/// 64-row query tile), so that a query tile's leading or trailing key tiles drop every key and
/// one tile drops them all: float16 on tensor cores with a float16 mask over 448 keys (the fused
/// kernel reads it 16 bytes at a time, skips those tiles and walks none for the masked tile),
/// float32 with a float32 mask over 451 keys (rows not aligned: the terms read one by one, every
/// tile walked), and float16 with a bool mask over 448 keys whose last key, dropped by every
/// row, is +inf in k (a bool mask drops a key whatever its score: the outputs stay finite).
/// Both outputs compared with the reference (the masked rows exactly 0 and +inf).
inline void CheckBandedMask(const ir::Target& target, const Executor& exec) {
  struct Form {
    DType t, mask;
    int64_t lk;
  };
  for (const Form& f :
       {Form{DType::kFloat16, DType::kFloat16, 448}, Form{DType::kFloat32, DType::kFloat32, 451},
        Form{DType::kFloat16, DType::kBool, 448}}) {
    const int64_t lq = 300, lk = f.lk;
    const bool keeps = f.mask == DType::kBool;
    auto dropped = [](int64_t i) { return i == 7 || (i >= 128 && i < 192); };
    SCOPED_TRACE(absl::StrCat(hlir::DTypeName(f.t), " mask ", hlir::DTypeName(f.mask)));
    OpCase c{"attention",
             {f.t, f.t, f.t, f.mask},
             {S({2, 3, lq, 64}), S({2, 3, lk, 64}), S({2, 3, lk, 64}), S({lq, lk})},
             {{"scale", 0.125}},
             {}};
    auto graph = CaseGraph(c);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto module = hlir::CompileGraph(*graph, target, "banded_mask");
    ASSERT_TRUE(module.ok()) << module.status();
    std::mt19937_64 rng(std::random_device{}());
    std::uniform_real_distribution<double> uniform(-1, 1);
    std::vector<hlir::HostTensor> in;
    for (size_t i = 0; i < 3; ++i) {
      in.emplace_back(f.t, Concrete(c.shapes[i]));
      for (double& x : in.back().data) x = hlir::RoundToDType(uniform(rng), f.t);
    }
    in.emplace_back(f.mask, Concrete(c.shapes[3]));
    for (int64_t i = 0; i < lq; ++i) {
      for (int64_t j = 0; j < lk; ++j) {
        const bool kept = !dropped(i) && j >= i + 40 && j < i + 120;
        in[3].data[i * lk + j] = keeps  ? kept
                                 : kept ? hlir::RoundToDType(uniform(rng), f.mask)
                                        : -INFINITY;
      }
    }
    if (keeps) {  // k's last key: +inf, dropped by every row
      for (int64_t bh = 0; bh < 6; ++bh) {
        for (int64_t e = 0; e < 64; ++e) in[1].data[(bh * lk + lk - 1) * 64 + e] = INFINITY;
      }
    }
    std::vector<hlir::HostTensor> want;
    auto args = RunBesideReference(*graph, *module, in, exec, &want);
    if (::testing::Test::HasFatalFailure() || args.empty()) return;
    const Tolerance tol = ToleranceFor(f.t);
    const TypedTensor &out = *args[4], &lse = *args[5];
    int bad = 0;
    for (int64_t row = 0; row < 2 * 3 * lq && bad < 5; ++row) {
      if (dropped(row % lq)) {
        EXPECT_EQ(lse.Get(row), INFINITY) << "row " << row;
        for (int64_t e = 0; e < 64; ++e) EXPECT_EQ(out.Get(row * 64 + e), 0.0) << "row " << row;
        continue;
      }
      bad += !(std::fabs(lse.Get(row) - want[1].data[row]) <= 1e-4 + 1e-4 * want[1].data[row]);
      for (int64_t e = 0; e < 64; ++e) {
        const double w = want[0].data[row * 64 + e], g = out.Get(row * 64 + e);
        bad += !(std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w));
      }
      if (bad) {
        ADD_FAILURE() << "row " << row << " (lse " << lse.Get(row) << ", want " << want[1].data[row]
                      << ")";
      }
    }
  }
}

/// attention with dropout p against its meaning in other ops, in one compiled module: softmax(q
/// kᵀ · scale) times the weights random_uniform(seed, stream) of shape [B, H, Lq, Lk] gives
/// (1 / (1 - p) below 1 - p, else 0), times v. Both outputs on the executor's target agree
/// (1e-5), and each matches the reference; a fresh seed and a stream of 3 per run.
inline void CheckDropoutIsRandomUniformsMask(const ir::Target& target, const Executor& exec) {
  const double p = 0.4, scale = 0.25;
  const std::vector<int64_t> scores{2, 3, 17, 23};
  frontend::NetBuilder b;
  auto q = b.CreateInput(DType::kFloat32, S({2, 3, 17, 16}), "q");
  auto k = b.CreateInput(DType::kFloat32, S({2, 3, 23, 16}), "k");
  auto v = b.CreateInput(DType::kFloat32, S({2, 3, 23, 8}), "v");
  auto seed = b.CreateInput(DType::kInt64, S({1}), "seed");
  auto stream = b.CreateInput(DType::kInt64, S({1}), "stream");
  auto fill = [&](double value) {
    return b.Op("fill", {},
                {{"shape", std::vector<int64_t>{1}}, {"value", value}, {"dtype", "float32"}})[0];
  };
  b.MarkOutput(b.Op("attention", {q, k, v, seed, stream}, {{"dropout", p}, {"scale", scale}})[0]);
  auto s = b.Op("mul", {b.Op("matmul", {q, k}, {{"transpose_y", true}})[0], fill(scale)})[0];
  auto probs = b.Op("softmax", {s}, {{"axis", int64_t{-1}}})[0];
  auto u = b.Op("random_uniform", {seed, stream}, {{"shape", scores}, {"stream", int64_t{0}}})[0];
  auto w = b.Op("where", {b.Op("less", {u, fill(1 - p)})[0], fill(1 / (1 - p)), fill(0)})[0];
  b.MarkOutput(b.Op("matmul", {b.Op("mul", {probs, w})[0], v})[0]);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, target, "dropout_mask");
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> uniform(-2, 2);
  std::vector<hlir::HostTensor> in;
  for (const Shape& shape : {S({2, 3, 17, 16}), S({2, 3, 23, 16}), S({2, 3, 23, 8})}) {
    in.emplace_back(DType::kFloat32, Concrete(shape));
    for (double& x : in.back().data) x = hlir::RoundToDType(uniform(rng), DType::kFloat32);
  }
  in.emplace_back(DType::kInt64, std::vector<int64_t>{1});
  in.back().data = {static_cast<double>(rng() >> 11)};  // below 2^53
  in.emplace_back(DType::kInt64, std::vector<int64_t>{1});
  in.back().data = {3};
  SCOPED_TRACE(absl::StrCat("seed ", static_cast<int64_t>(in[3].data[0])));
  std::vector<hlir::HostTensor> want;
  auto args = RunBesideReference(*graph, *module, in, exec, &want);
  if (::testing::Test::HasFatalFailure() || args.empty()) return;
  const TypedTensor &fused = *args[5], &composed = *args[6];
  int zeros = 0;
  for (int64_t i = 0; i < fused.size(); ++i) {
    const double f = fused.Get(i), c = composed.Get(i);
    ASSERT_NEAR(f, c, 1e-5 + 1e-5 * std::fabs(c)) << "element " << i;
    ASSERT_NEAR(f, want[0].data[i], 1e-5 + 1e-5 * std::fabs(f)) << "element " << i;
    ASSERT_NEAR(c, want[1].data[i], 1e-5 + 1e-5 * std::fabs(c)) << "element " << i;
    zeros += f == 0;
  }
  EXPECT_LT(zeros, fused.size() / 10);  // outputs mix many kept values: none is dropped whole
}

/// Cases of a realistic size for the fused GPU kernel: several query and key tiles with
/// partial last tiles, each head-dim bucket, grouped heads, masks of every kind, causal.
inline std::vector<OpCase> LargeAttentionCases() {
  const DType f32 = DType::kFloat32, f16 = DType::kFloat16, bf16 = DType::kBFloat16;
  std::vector<OpCase> cases = {
      {"attention",
       {f16, f16, f16},
       {S({2, 8, 200, 64}), S({2, 2, 333, 64}), S({2, 2, 333, 64})},
       {{"causal", true}},
       {}},
      {"attention",
       {bf16, bf16, bf16, f32},
       {S({1, 4, 257, 128}), S({1, 4, 300, 128}), S({1, 4, 300, 128}), S({1, 1, 257, 300})},
       {},
       {}},
      {"attention",
       {f32, f32, f32, DType::kBool},
       {S({2, 2, 100, 32}), S({2, 2, 120, 32}), S({2, 2, 120, 20}), S({2, 1, 100, 120})},
       {{"scale", 0.5}},
       {}},
      {"attention",
       {f16, f16, f16, f16},
       {S({1, 2, 64, 256}), S({1, 1, 80, 256}), S({1, 1, 80, 256}), S({64, 80})},
       {{"causal", true}},
       {}},
      {"attention",
       {f32, f32, f32},
       {S({1, 1, 3, 96}), S({1, 1, 1000, 96}), S({1, 1, 1000, 96})},
       {},
       {}},
      {"attention",
       {bf16, bf16, bf16, DType::kBool},
       {S({1, 6, 70, 40}), S({1, 3, 130, 40}), S({1, 3, 130, 24}), S({1, 1, 70, 130})},
       {{"causal", true}},
       {}},
  };
  for (OpCase& c : cases) c.domains.resize(c.shapes.size(), Domain::kUniform);
  return cases;
}

}  // namespace cinn_like::testing
