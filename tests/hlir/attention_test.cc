/// \file The attention op on x86: its reference on hand-computed values (softmax weights, causal,
/// default scale), the decomposed compute against the reference on fully masked rows and on
/// the larger GPU-sized cases, and the inference errors, each naming op, tensors and shapes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/attention_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

/// The reference's (out, logsumexp) of one-head attention on [L, 1] columns.
std::vector<hlir::HostTensor> Reference(const std::vector<double>& q, const std::vector<double>& k,
                                        const std::vector<double>& v, const AttributeMap& attrs) {
  frontend::NetBuilder b;
  int64_t lq = q.size(), lk = k.size();
  auto qv = b.CreateInput(DType::kFloat64, S({1, 1, lq, 1}), "q");
  auto kv = b.CreateInput(DType::kFloat64, S({1, 1, lk, 1}), "k");
  auto vv = b.CreateInput(DType::kFloat64, S({1, 1, lk, 1}), "v");
  for (const auto& o : b.Op("attention", {qv, kv, vv}, attrs)) b.MarkOutput(o);
  auto graph = frontend::BuildGraph(*b.Build());
  EXPECT_TRUE(graph.ok()) << graph.status();
  std::vector<hlir::HostTensor> in;
  for (const auto* x : {&q, &k, &v}) {
    in.emplace_back(DType::kFloat64, std::vector<int64_t>{1, 1, int64_t(x->size()), 1});
    in.back().data = *x;
  }
  auto out = hlir::RunReference(*graph, in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<hlir::HostTensor>{};
}

TEST(AttentionReference, SoftmaxWeightsCausalAndScale) {
  // Row 0 scores (1, -1), row 1 (2, -2) at scale 1.
  auto r = Reference({1, 2}, {1, -1}, {10, 20}, {{"scale", 1.0}});
  ASSERT_EQ(r.size(), 2u);
  const double e = std::exp(1.0), e2 = std::exp(2.0);
  EXPECT_NEAR(r[0].data[0], (10 * e + 20 / e) / (e + 1 / e), 1e-12);
  EXPECT_NEAR(r[0].data[1], (10 * e2 + 20 / e2) / (e2 + 1 / e2), 1e-12);
  EXPECT_NEAR(r[1].data[0], std::log(e + 1 / e), 1e-6);  // logsumexp is float32
  EXPECT_EQ(r[1].dtype, DType::kFloat32);
  // Causal: row 0 sees key 0 only.
  auto c = Reference({1, 2}, {1, -1}, {10, 20}, {{"scale", 1.0}, {"causal", true}});
  EXPECT_NEAR(c[0].data[0], 10, 1e-12);
  EXPECT_NEAR(c[1].data[0], 1, 1e-6);
  EXPECT_NEAR(c[0].data[1], r[0].data[1], 1e-12);
  // The default scale is 1 / sqrt(head dim) = 1 here (head dim 1).
  auto d = Reference({1, 2}, {1, -1}, {10, 20}, {});
  EXPECT_EQ(d[0].data, r[0].data);
}

TEST(AttentionX86, FullyMaskedRowsAreZeroWithInfiniteLogsumexp) {
  CheckFullyMaskedRows(ir::Target::X86(), RunOnX86);
}

TEST(AttentionX86, BandedMaskMatchesReference) { CheckBandedMask(ir::Target::X86(), RunOnX86); }

TEST(AttentionX86, DropoutMaskIsTheOneRandomUniformDraws) {
  CheckDropoutIsRandomUniformsMask(ir::Target::X86(), RunOnX86);
}

TEST(AttentionX86, LargeCasesMatchReference) {
  for (const OpCase& c : LargeAttentionCases()) RunOpCase(c, ir::Target::X86(), RunOnX86);
}

/// The inference error of attention on inputs of `shapes` (float32 unless `dtypes`).
std::string InferError(const std::vector<Shape>& shapes, std::vector<DType> dtypes = {},
                       const AttributeMap& attrs = {}) {
  std::vector<hlir::TensorDesc> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    in.push_back({i < dtypes.size() ? dtypes[i] : DType::kFloat32, shapes[i]});
  }
  auto out = hlir::OpRegistry::Global().Infer("attention", in, attrs);
  EXPECT_FALSE(out.ok());
  return out.ok() ? "" : std::string(out.status().message());
}

TEST(AttentionError, InferenceNamesOpTensorsAndShapes) {
  const Shape q = S({2, 4, 5, 8}), kv = S({2, 2, 6, 8});
  EXPECT_THAT(InferError({S({4, 5, 8}), kv, kv}),
              HasSubstr("op attention: q must have rank 4 ([batch, heads, length, head dim]); got "
                        "q (input 0, float32[4, 5, 8]), k (input 1, float32[2, 2, 6, 8])"));
  EXPECT_THAT(InferError({q, S({2, 2, 6, 4}), S({2, 2, 6, 4})}),
              HasSubstr("q and k differ in head dim"));
  EXPECT_THAT(InferError({q, S({2, 3, 6, 8}), S({2, 3, 6, 8})}),
              HasSubstr("q's heads (4) must be a multiple of k's and v's heads (3)"));
  EXPECT_THAT(InferError({q, kv, S({2, 2, 7, 8})}),
              HasSubstr("k and v must have the same heads and length; got q (input 0, "
                        "float32[2, 4, 5, 8]), k (input 1, float32[2, 2, 6, 8]), v (input 2, "
                        "float32[2, 2, 7, 8])"));
  EXPECT_THAT(InferError({q, S({3, 2, 6, 8}), S({3, 2, 6, 8})}),
              HasSubstr("q, k and v differ in batch size"));
  EXPECT_THAT(InferError({q, kv, kv, S({5, 7})}),
              HasSubstr("mask must broadcast to the scores [2, 4, 5, 6] [batch, heads, Lq, Lk]; "
                        "got q (input 0, float32[2, 4, 5, 8]), k (input 1, float32[2, 2, 6, 8]), v "
                        "(input 2, float32[2, 2, 6, 8]), mask (input 3, float32[5, 7])"));
  EXPECT_THAT(InferError({q, kv, kv, S({1, 2, 4, 5, 6})}), HasSubstr("mask must broadcast"));
  EXPECT_THAT(InferError({q, kv, kv, S({5, 6})},
                         {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kInt32}),
              HasSubstr("mask has dtype int32; it must be bool (true keeps a key) or a float"));
  EXPECT_THAT(InferError({q, kv, kv}, {DType::kFloat32, DType::kFloat16}),
              HasSubstr("op attention: input 0 (float32[2, 4, 5, 8]) and input 1 "
                        "(float16[2, 2, 6, 8]) have different dtypes"));
  EXPECT_THAT(InferError({q, kv, kv}, {DType::kInt32, DType::kInt32, DType::kInt32}),
              HasSubstr("op attention: input 0 (int32[2, 4, 5, 8]) has dtype int32"));
  EXPECT_THAT(InferError({q, kv, kv}, {}, {{"scale", INFINITY}}),
              HasSubstr("attribute 'scale' is inf; it must be finite"));
  EXPECT_THAT(InferError({q, kv, kv}, {}, {{"causal", 1.5}}), HasSubstr("'causal'"));
  const Shape sym_d{Dim::Known(1), Dim::Known(1), Dim::Known(3), Dim::Symbol("d")};
  EXPECT_THAT(InferError({sym_d, sym_d, sym_d}),
              HasSubstr("attribute 'scale' is missing (a float); it is required when the head "
                        "dim is symbolic"));
  auto arity = hlir::OpRegistry::Global().Infer("attention", {{DType::kFloat32, q}}, {});
  ASSERT_FALSE(arity.ok());
  EXPECT_THAT(std::string(arity.status().message()),
              HasSubstr("op attention: takes 3 to 6 inputs, got 1"));
  // Dropout: its seed and stream follow the tensors; a probability in [0, 1).
  const Shape one = S({1});
  const std::vector<DType> f32_i64 = {DType::kFloat32, DType::kFloat32, DType::kFloat32,
                                      DType::kInt64, DType::kInt64};
  EXPECT_THAT(InferError({q, kv, kv, one, one}, f32_i64, {{"dropout", 1.0}}),
              HasSubstr("attribute 'dropout' is 1; it must be in [0, 1)"));
  EXPECT_THAT(InferError({q, kv, kv, one}, {}, {{"dropout", 0.5}}),
              HasSubstr("4 inputs with dropout 0.5; it takes q, k, v, an optional mask, and with "
                        "dropout a seed and a stream"));
  EXPECT_THAT(InferError({q, kv, kv, one, S({2})}, f32_i64, {{"dropout", 0.5}}),
              HasSubstr("stream (input 4, int64[2]) must be one int64 element, shape [1]"));
  EXPECT_THAT(InferError({q, kv, kv, S({5, 6}), one, one},
                         {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kBool,
                          DType::kInt32, DType::kInt64},
                         {{"dropout", 0.5}}),
              HasSubstr("seed (input 4, int32[1]) must be one int64 element"));
}

TEST(AttentionX86, OutputsAndTheirDTypes) {
  auto out = hlir::OpRegistry::Global().Infer("attention",
                                              {{DType::kBFloat16, S({2, 4, 5, 8})},
                                               {DType::kBFloat16, S({2, 2, 6, 8})},
                                               {DType::kBFloat16, S({2, 2, 6, 3})},
                                               {DType::kBool, S({6})}},
                                              {{"causal", true}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].ToString(), "bfloat16[2, 4, 5, 3]");
  EXPECT_EQ((*out)[1].ToString(), "float32[2, 4, 5]");
}

}  // namespace
}  // namespace cinn_like::testing
