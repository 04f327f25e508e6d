/// \file Symbolic sizes whose arithmetic overflows (issue 50, class 5): each symbol fits, their
/// product does not; a product that wrapped could match the dim a caller passed (0 here) and the
/// kernels then wrote past the buffers. The entry now evaluates every symbolic size in 64 bits
/// with overflow checks before anything runs, and refuses naming the tensor, the dim, the
/// polynomial and the dims its symbols come from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "tests/fusion_cases.h"
#include "tests/test_util.h"

namespace cinn_like {
namespace {

using hlir::Dim;
using hlir::DType;
using testing::FloatView;
using ::testing::HasSubstr;

/// x [s0], y [s1] -> the outer product flattened, [s0*s1].
frontend::Program OuterFlat() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, {Dim::Symbol("s0"), Dim::Known(1)}, "x");
  auto y = b.CreateInput(DType::kFloat32, {Dim::Known(1), Dim::Symbol("s1")}, "y");
  b.MarkOutput(b.Reshape(b.Mul(x, y), {-1}));
  return *b.Build();
}

/// x [s0], y [s1], z [s2] -> their outer product flattened, [s0*s1*s2].
frontend::Program OuterFlat3() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, {Dim::Symbol("s0"), Dim::Known(1), Dim::Known(1)}, "x");
  auto y = b.CreateInput(DType::kFloat32, {Dim::Known(1), Dim::Symbol("s1"), Dim::Known(1)}, "y");
  auto z = b.CreateInput(DType::kFloat32, {Dim::Known(1), Dim::Known(1), Dim::Symbol("s2")}, "z");
  b.MarkOutput(b.Reshape(b.Mul(b.Mul(x, y), z), {-1}));
  return *b.Build();
}

TEST(SizeOverflow, AProductPastInt64IsRefusedAtTheCall) {
  // 2^21 cubed is 2^63, which wraps to -2^63 in int64; each input fits the index range.
  const std::string json = frontend::ProgramToJson(OuterFlat3());
  cinn_like_module module = nullptr;
  ASSERT_EQ(cinn_like_compile(json.c_str(), "x86", "f", &module), 0) << cinn_like_get_last_error();
  cinn_like_function fn = nullptr;
  ASSERT_EQ(cinn_like_module_lookup(module, "f", &fn), 0);
  const int64_t s = int64_t{1} << 21;
  std::vector<float> x(s, 1.0f), y(s, 1.0f), z(s, 1.0f), out(1, 0.0f);
  std::vector<int64_t> xs{s, 1, 1}, ys{1, s, 1}, zs{1, 1, s}, os{0};
  DLTensor a = FloatView(x.data(), xs), c = FloatView(y.data(), ys), d = FloatView(z.data(), zs),
           o = FloatView(out.data(), os);
  DLTensor* args[] = {&a, &c, &d, &o};
  ASSERT_NE(cinn_like_call(fn, args, 4, nullptr), 0);
  const std::string error = cinn_like_get_last_error();
  EXPECT_THAT(error, HasSubstr("dim 0 = "));
  EXPECT_THAT(error, HasSubstr("s2 from z dim 2"));
  EXPECT_THAT(error, HasSubstr("the function addresses at most 2147483647 elements"));
  EXPECT_EQ(out[0], 0.0f);
  cinn_like_module_free(module);
}

TEST(SizeOverflow, AProductOfSymbolsThatWrapsIsRefusedAtTheCall) {
  const std::string json = frontend::ProgramToJson(OuterFlat());
  cinn_like_module module = nullptr;
  ASSERT_EQ(cinn_like_compile(json.c_str(), "x86", "f", &module), 0) << cinn_like_get_last_error();
  cinn_like_function fn = nullptr;
  ASSERT_EQ(cinn_like_module_lookup(module, "f", &fn), 0);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1, 1);
  // A small call is right: out[i * s1 + j] = x[i] * y[j].
  {
    std::vector<float> x(5), y(7), out(35, NAN);
    for (float& v : x) v = dist(rng);
    for (float& v : y) v = dist(rng);
    std::vector<int64_t> xs{5, 1}, ys{1, 7}, os{35};
    DLTensor a = FloatView(x.data(), xs), c = FloatView(y.data(), ys),
             o = FloatView(out.data(), os);
    DLTensor* args[] = {&a, &c, &o};
    ASSERT_EQ(cinn_like_call(fn, args, 3, nullptr), 0) << cinn_like_get_last_error();
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 7; ++j) EXPECT_FLOAT_EQ(out[i * 7 + j], x[i] * y[j]);
    }
  }
  // 2^16 * 2^16 = 2^32: 0 in 32 bits, so a caller passing an output of 0 elements matched.
  // 2^31 - 1 squared passes 2^61; 3 * 2^30 ... each product past the index range.
  for (auto [s0, s1, passed] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {int64_t{1} << 16, int64_t{1} << 16, 0},
           {int64_t{1} << 16, (int64_t{1} << 16) + 1, int64_t{1} << 16},
           {int64_t{1} << 20, int64_t{1} << 12, 0}}) {
    SCOPED_TRACE(::testing::Message() << s0 << " x " << s1 << ", output of " << passed);
    std::vector<float> x(s0, 1.0f), y(s1, 1.0f), out(std::max<int64_t>(passed, 1), 0.0f);
    std::vector<int64_t> xs{s0, 1}, ys{1, s1}, os{passed};
    DLTensor a = FloatView(x.data(), xs), c = FloatView(y.data(), ys),
             o = FloatView(out.data(), os);
    DLTensor* args[] = {&a, &c, &o};
    ASSERT_NE(cinn_like_call(fn, args, 3, nullptr), 0);
    const std::string error = cinn_like_get_last_error();
    EXPECT_THAT(error, HasSubstr("tensor "));
    EXPECT_THAT(error, HasSubstr("dim 0 = "));
    EXPECT_THAT(error, HasSubstr("s0 from x dim 0"));
    EXPECT_THAT(error, HasSubstr("s1 from y dim 1"));
    EXPECT_THAT(error, HasSubstr("the function addresses at most 2147483647 elements"));
  }
  cinn_like_module_free(module);
}

}  // namespace
}  // namespace cinn_like
