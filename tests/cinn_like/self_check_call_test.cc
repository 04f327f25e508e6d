/// \file The call-time self-check (flag cinn_like_self_check) through the C API: a matching
/// function passes on fresh random inputs; a planted wrong op (cinn_like_debug_wrong_op) fails
/// the call naming its instruction, op, output, fusion group and element; without the flag at
/// call time, or at compile time, or through a direct call of the pointer, nothing is checked.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "tests/fusion_cases.h"

namespace cinn_like {
namespace {

using hlir::DType;
using ::testing::HasSubstr;

constexpr int64_t kRows = 13, kCols = 5;

frontend::Program Chain() { return testing::TanhChain(); }

void SetFlagOrFail(const char* name, const char* value) {
  ASSERT_EQ(cinn_like_set_flag(name, value), 0) << cinn_like_get_last_error();
}

/// A module compiled from Chain() for x86 under the flags in force, and its entry "f".
struct Compiled {
  cinn_like_module module = nullptr;
  cinn_like_function fn = nullptr;
  Compiled() {
    const std::string json = frontend::ProgramToJson(Chain());
    EXPECT_EQ(cinn_like_compile(json.c_str(), "x86", "f", &module), 0)
        << cinn_like_get_last_error();
    if (module) EXPECT_EQ(cinn_like_module_lookup(module, "f", &fn), 0);
  }
  ~Compiled() { cinn_like_module_free(module); }
};

/// Fresh random inputs, x read at a byte offset into its buffer (the check must honour it),
/// and an output filled with NaN; the seed is in every failure's trace.
struct Call {
  std::vector<float> x_buffer, y, out;
  std::vector<int64_t> x_shape{kRows, kCols}, y_shape{kCols}, out_shape{kRows, kCols};
  DLTensor x_dl{}, y_dl{}, out_dl{};
  static constexpr int64_t kOffset = 3;  // elements before x in x_buffer

  explicit Call(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2, 2);
    x_buffer.resize(kOffset + kRows * kCols);
    for (float& v : x_buffer) v = dist(rng);
    // y <= 0 keeps tanh(..) - y positive, so relu never hides the planted negation (every
    // element of a planted result differs).
    std::uniform_real_distribution<float> non_positive(-2, 0);
    y.resize(kCols);
    for (float& v : y) v = non_positive(rng);
    out.assign(kRows * kCols, NAN);
    auto view = [](DLTensor& t, void* data, std::vector<int64_t>& shape) {
      t.data = data;
      t.device = {kDLCPU, 0};
      t.ndim = static_cast<int32_t>(shape.size());
      t.dtype = {kDLFloat, 32, 1};
      t.shape = shape.data();
    };
    view(x_dl, x_buffer.data(), x_shape);
    x_dl.byte_offset = kOffset * sizeof(float);
    view(y_dl, y.data(), y_shape);
    view(out_dl, out.data(), out_shape);
  }
  int Run(cinn_like_function fn) {
    DLTensor* args[] = {&x_dl, &y_dl, &out_dl};
    return cinn_like_call(fn, args, 3, nullptr);
  }
  /// How many elements of `out` differ from Chain() computed here in double.
  int WrongElements() const {
    int wrong = 0;
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        double x = x_buffer[kOffset + i * kCols + j];
        double want = std::max(0.0, std::tanh(std::exp(x + y[j])) - y[j]);
        wrong += !(std::fabs(out[i * kCols + j] - want) <= 1e-5 + 1e-5 * std::fabs(want));
      }
    }
    return wrong;
  }
};

uint32_t FreshSeed() { return std::random_device{}(); }

TEST(SelfCheckCall, AMatchingFunctionPassesOnFreshRandomInputs) {
  gflags::FlagSaver saver;
  SetFlagOrFail("cinn_like_self_check", "true");
  Compiled c;
  ASSERT_NE(c.fn, nullptr);
  for (int round = 0; round < 3; ++round) {
    const uint32_t seed = FreshSeed();
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Call call(seed);
    ASSERT_EQ(call.Run(c.fn), 0) << cinn_like_get_last_error();
    EXPECT_EQ(call.WrongElements(), 0);
  }
}

TEST(SelfCheckCall, APlantedWrongOpIsNamedWithItsInstruction) {
  gflags::FlagSaver saver;
  SetFlagOrFail("cinn_like_self_check", "true");
  SetFlagOrFail("cinn_like_debug_wrong_op", "tanh");
  Compiled c;
  ASSERT_NE(c.fn, nullptr);
  const uint32_t seed = FreshSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  Call call(seed);
  ASSERT_NE(call.Run(c.fn), 0);
  const frontend::Program program = Chain();
  const std::string error = cinn_like_get_last_error();
  EXPECT_THAT(error, HasSubstr("self-check of f: outputs differ from the reference"));
  EXPECT_THAT(error, HasSubstr("output " + program.outputs[0] + " (float32[13, 5]) element"));
  EXPECT_THAT(error, HasSubstr("first differing instruction: 2 (op tanh, output " +
                               program.instructions[2].outputs[0] + "), in fusion group 0 of 1"));
  EXPECT_THAT(error, HasSubstr("(tolerance 0.0001)"));
  EXPECT_THAT(error, HasSubstr(", want "));
  EXPECT_GT(call.WrongElements(), 0);  // the outputs are written, wrong as planted
}

TEST(SelfCheckCall, TheFlagOffAtCallTimeMeansNoCheck) {
  gflags::FlagSaver saver;
  SetFlagOrFail("cinn_like_self_check", "true");
  SetFlagOrFail("cinn_like_debug_wrong_op", "tanh");
  Compiled c;
  ASSERT_NE(c.fn, nullptr);
  SetFlagOrFail("cinn_like_self_check", "false");
  const uint32_t seed = FreshSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  Call call(seed);
  EXPECT_EQ(call.Run(c.fn), 0) << cinn_like_get_last_error();
  EXPECT_GT(call.WrongElements(), 0);  // wrong, and unchecked
}

TEST(SelfCheckCall, AFunctionCompiledWithoutTheFlagIsNotChecked) {
  gflags::FlagSaver saver;
  SetFlagOrFail("cinn_like_debug_wrong_op", "tanh");
  Compiled c;
  ASSERT_NE(c.fn, nullptr);
  SetFlagOrFail("cinn_like_self_check", "true");
  const uint32_t seed = FreshSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  Call call(seed);
  EXPECT_EQ(call.Run(c.fn), 0) << cinn_like_get_last_error();
  EXPECT_GT(call.WrongElements(), 0);
}

TEST(SelfCheckCall, ADirectCallOfThePointerIsNotChecked) {
  gflags::FlagSaver saver;
  SetFlagOrFail("cinn_like_self_check", "true");
  SetFlagOrFail("cinn_like_debug_wrong_op", "tanh");
  Compiled c;
  ASSERT_NE(c.fn, nullptr);
  const uint32_t seed = FreshSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  Call call(seed);
  DLTensor* args[] = {&call.x_dl, &call.y_dl, &call.out_dl};
  EXPECT_EQ(c.fn(args, 3, nullptr), 0) << cinn_like_get_last_error();
  EXPECT_GT(call.WrongElements(), 0);
}

TEST(SelfCheckCall, ArgumentsTheFunctionRefusesGiveItsOwnError) {
  gflags::FlagSaver saver;
  SetFlagOrFail("cinn_like_self_check", "true");
  Compiled c;
  ASSERT_NE(c.fn, nullptr);
  Call call(FreshSeed());
  call.y_dl.dtype = {kDLFloat, 64, 1};
  DLTensor* args[] = {&call.x_dl, &call.y_dl, &call.out_dl};
  EXPECT_NE(cinn_like_call(c.fn, args, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("has dtype float64, expected float32"));
  EXPECT_NE(cinn_like_call(c.fn, args, 2, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("expected 3 tensor arguments"));
}

}  // namespace
}  // namespace cinn_like
