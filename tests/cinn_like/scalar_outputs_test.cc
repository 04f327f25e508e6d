/// \file Ranks at the call, through the C API: a Program's rank-0 output (the fuzzer found a fill
/// of rank 0 refused at the call: the function took a one-element vector only) takes a rank-0
/// tensor, as the Program's signature says, or a one-element vector; a tensor the Program
/// declares [1] takes that vector only; every refusal names the function, the argument and
/// both shapes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "tests/test_util.h"

namespace cinn_like {
namespace {

using ::testing::HasSubstr;

/// The entry "f" of `program` compiled for x86.
struct Compiled {
  cinn_like_module module = nullptr;
  cinn_like_function fn = nullptr;
  explicit Compiled(const frontend::Program& program) {
    const std::string json = frontend::ProgramToJson(program);
    EXPECT_EQ(cinn_like_compile(json.c_str(), "x86", "f", &module), 0)
        << cinn_like_get_last_error();
    if (module) EXPECT_EQ(cinn_like_module_lookup(module, "f", &fn), 0);
  }
  ~Compiled() { cinn_like_module_free(module); }
};

TEST(ScalarOutputs, ARankZeroOutputTakesARankZeroOrAOneElementTensor) {
  // A fill of rank 0 (a compile-time value: the one kind of rank-0 output the graph compiler
  // makes; other ops' are refused at compile time) beside a sum of an input, so the call has
  // an input to check too.
  frontend::NetBuilder b;
  frontend::Var x = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({6}), "x");
  b.MarkOutput(b.Fill({}, 2.5));
  b.MarkOutput(b.Relu(x));
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  Compiled c(*program);
  ASSERT_NE(c.fn, nullptr);

  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> data(6), relu(6);
  for (float& v : data) v = dist(rng);
  std::vector<int64_t> x_shape{6}, scalar{}, one{1}, two{2};
  DLTensor x_dl = testing::FloatView(data.data(), x_shape);
  DLTensor relu_dl = testing::FloatView(relu.data(), x_shape);
  for (std::vector<int64_t>* shape : {&scalar, &one}) {
    float out[2] = {-12345, -12345};
    DLTensor out_dl = testing::FloatView(out, *shape);
    DLTensor* args[] = {&x_dl, &out_dl, &relu_dl};
    ASSERT_EQ(cinn_like_call(c.fn, args, 3, nullptr), 0)
        << "rank " << shape->size() << ": " << cinn_like_get_last_error();
    EXPECT_EQ(out[0], 2.5f) << "rank " << shape->size();
    EXPECT_EQ(out[1], -12345) << "wrote past the one element";
    for (int i = 0; i < 6; ++i) EXPECT_EQ(relu[i], data[i] > 0 ? data[i] : 0.0f) << i;
  }
  float out[2];
  DLTensor wrong = testing::FloatView(out, two);
  DLTensor* args[] = {&x_dl, &wrong, &relu_dl};
  EXPECT_NE(cinn_like_call(c.fn, args, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("has size 2 at dim 0, expected 1"));
  // Another rank is refused, the message saying both forms the output takes.
  std::vector<int64_t> one_by_one{1, 1};
  DLTensor matrix = testing::FloatView(out, one_by_one);
  DLTensor* ranked[] = {&x_dl, &matrix, &relu_dl};
  EXPECT_NE(cinn_like_call(c.fn, ranked, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(),
              HasSubstr("f: argument 1 (fill_0) has rank 2 (shape [1, 1]), expected rank 0 "
                        "(shape []) or rank 1 (shape [1])"));
  // An input of rank 0 where the function takes a vector of six is still refused.
  DLTensor x_scalar = testing::FloatView(data.data(), scalar);
  DLTensor out_dl = testing::FloatView(out, scalar);
  DLTensor* bad[] = {&x_scalar, &out_dl, &relu_dl};
  EXPECT_NE(cinn_like_call(c.fn, bad, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(),
              HasSubstr("f: argument 0 (x) has rank 0 (shape []), expected rank 1 (shape [6])"));
}

TEST(ScalarOutputs, ATensorDeclaredOneElementTakesNoRankZeroTensor) {
  // x and its relu are [1] in the Program: a one-element vector, not a scalar, so a rank-0
  // tensor is another rank (the check once took it for any one-element vector).
  frontend::NetBuilder b;
  frontend::Var x = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({1}), "x");
  b.MarkOutput(b.Relu(x));
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  Compiled c(*program);
  ASSERT_NE(c.fn, nullptr);

  std::mt19937 rng(std::random_device{}());
  float in = std::uniform_real_distribution<float>(0.5f, 2)(rng), out = -12345;
  std::vector<int64_t> scalar{}, one{1};
  DLTensor x_one = testing::FloatView(&in, one), out_one = testing::FloatView(&out, one);
  DLTensor x_scalar = testing::FloatView(&in, scalar),
           out_scalar = testing::FloatView(&out, scalar);
  DLTensor* good[] = {&x_one, &out_one};
  ASSERT_EQ(cinn_like_call(c.fn, good, 2, nullptr), 0) << cinn_like_get_last_error();
  EXPECT_EQ(out, in);
  out = -12345;
  DLTensor* scalar_in[] = {&x_scalar, &out_one};
  EXPECT_NE(cinn_like_call(c.fn, scalar_in, 2, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(),
              HasSubstr("f: argument 0 (x) has rank 0 (shape []), expected rank 1 (shape [1])"));
  DLTensor* scalar_out[] = {&x_one, &out_scalar};
  EXPECT_NE(cinn_like_call(c.fn, scalar_out, 2, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(),
              HasSubstr("f: argument 1 (relu_0) has rank 0 (shape []), expected rank 1 "
                        "(shape [1])"));
  EXPECT_EQ(out, -12345) << "a refused call wrote its output";
}

}  // namespace
}  // namespace cinn_like
