/// \file index_add at the graph level: the reference interpreter against loops written here
/// (repeated indices accumulate), shape inference, and the errors' messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "frontend/net_builder.h"
#include "hlir/op.h"
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

}  // namespace
}  // namespace cinn_like::hlir
