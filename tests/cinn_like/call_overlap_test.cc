/// \file Outputs that share memory with another argument (issue 50, class 5): a transpose in
/// place read elements it had already overwritten and returned 0. Every compiled entry now
/// refuses such a call before it runs, naming both arguments; buffers side by side (no shared
/// byte) and tensors with no element are fine.
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

using hlir::DType;
using testing::FloatView;
using ::testing::HasSubstr;

constexpr int64_t kRows = 4, kCols = 6;

struct Module {
  cinn_like_module module = nullptr;
  cinn_like_function fn = nullptr;
  explicit Module(const frontend::Program& p, const char* target = "x86") {
    const std::string json = frontend::ProgramToJson(p);
    EXPECT_EQ(cinn_like_compile(json.c_str(), target, "f", &module), 0)
        << cinn_like_get_last_error();
    if (module) EXPECT_EQ(cinn_like_module_lookup(module, "f", &fn), 0);
  }
  ~Module() { cinn_like_module_free(module); }
};

frontend::Program Transpose() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, testing::S({kRows, kCols}), "x");
  b.MarkOutput(b.Transpose(x, {1, 0}));
  return *b.Build();
}

TEST(CallOverlap, ATransposeInPlaceIsRefusedNamingBothArguments) {
  Module m(Transpose());
  ASSERT_NE(m.fn, nullptr);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> buf(3 * kRows * kCols);
  for (float& v : buf) v = dist(rng);
  const std::vector<float> before = buf;
  std::vector<int64_t> xs{kRows, kCols}, os{kCols, kRows};
  // In place, partly overlapping (one element shared, at either end), through the C API and
  // through the pointer itself.
  for (int64_t out_at : {int64_t{0}, kRows * kCols - 1, int64_t{1}}) {
    for (int64_t x_at : {int64_t{0}, int64_t{1}}) {
      if (out_at == 1 && x_at == 1) continue;
      SCOPED_TRACE(::testing::Message() << "x at " << x_at << ", out at " << out_at);
      const int64_t x_start = x_at * kRows * kCols / 2, out_start = out_at + x_start;
      DLTensor x = FloatView(buf.data() + x_start, xs), out = FloatView(buf.data() + out_start, os);
      DLTensor* args[] = {&x, &out};
      ASSERT_NE(cinn_like_call(m.fn, args, 2, nullptr), 0);
      EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("overlaps input x (argument 0)"));
      EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("f: output "));
      ASSERT_NE(m.fn(args, 2, nullptr), 0);
      EXPECT_EQ(buf, before);  // refused before anything was written
    }
  }
  // Side by side (the output starts where x ends): right against a transpose of x.
  DLTensor x = FloatView(buf.data(), xs), out = FloatView(buf.data() + kRows * kCols, os);
  DLTensor* args[] = {&x, &out};
  ASSERT_EQ(cinn_like_call(m.fn, args, 2, nullptr), 0) << cinn_like_get_last_error();
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j)
      EXPECT_EQ(buf[kRows * kCols + j * kRows + i], before[i * kCols + j]);
  }
  // The same buffer through byte_offset counts too.
  DLTensor shifted = FloatView(buf.data(), os);
  shifted.byte_offset = sizeof(float) * 3;
  DLTensor* via_offset[] = {&x, &shifted};
  ASSERT_NE(cinn_like_call(m.fn, via_offset, 2, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("overlaps input x"));
}

TEST(CallOverlap, AnOpenCLTransposeInPlaceIsRefusedToo) {
  // OpenCL tensors are host memory the host glue copies to the device: the same check.
  const std::string json = frontend::ProgramToJson(Transpose());
  cinn_like_module probe = nullptr;
  if (cinn_like_compile(json.c_str(), "opencl", "f", &probe) != 0) {
#ifdef CINN_LIKE_WITH_OPENCL
    // Built with OpenCL: scripts/setup.sh installs PoCL, so a missing device is a failure,
    // not a reason to pass without looking.
    FAIL() << "built with OpenCL but cannot compile for it: " << cinn_like_get_last_error();
#else
    GTEST_SKIP() << "built without OpenCL: " << cinn_like_get_last_error();
#endif
  }
  cinn_like_module_free(probe);
  Module m(Transpose(), "opencl");
  ASSERT_NE(m.fn, nullptr);
  std::vector<float> buf(2 * kRows * kCols);
  for (size_t k = 0; k < buf.size(); ++k) buf[k] = static_cast<float>(k);
  std::vector<int64_t> xs{kRows, kCols}, os{kCols, kRows};
  DLTensor x = FloatView(buf.data(), xs), out = FloatView(buf.data(), os);
  DLTensor* args[] = {&x, &out};
  ASSERT_NE(cinn_like_call(m.fn, args, 2, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("overlaps input x (argument 0)"));
  out = FloatView(buf.data() + kRows * kCols, os);
  ASSERT_EQ(cinn_like_call(m.fn, args, 2, nullptr), 0) << cinn_like_get_last_error();
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      EXPECT_EQ(buf[kRows * kCols + j * kRows + i], static_cast<float>(i * kCols + j));
    }
  }
}

TEST(CallOverlap, ManyArgumentsAreCheckedAsFewAre) {
  // Past the pairwise check's 16 arguments: 20 inputs summed into one output.
  constexpr int kInputs = 20;
  frontend::NetBuilder b;
  std::vector<frontend::Var> xs;
  for (int i = 0; i < kInputs; ++i) {
    xs.push_back(b.CreateInput(DType::kFloat32, testing::S({8}), "x" + std::to_string(i)));
  }
  frontend::Var sum = xs[0];
  for (int i = 1; i < kInputs; ++i) sum = b.Add(sum, xs[i]);
  b.MarkOutput(sum);
  Module m(*b.Build());
  ASSERT_NE(m.fn, nullptr);
  std::vector<float> buf(8 * (kInputs + 1));
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : buf) v = dist(rng);
  std::vector<int64_t> shape{8};
  std::vector<DLTensor> t(kInputs + 1);
  std::vector<DLTensor*> args;
  // Inputs in reverse order in memory, the output after them: no overlap.
  for (int i = 0; i <= kInputs; ++i) {
    const int slot = i < kInputs ? kInputs - 1 - i : kInputs;
    t[i] = FloatView(buf.data() + 8 * slot, shape);
    args.push_back(&t[i]);
  }
  ASSERT_EQ(cinn_like_call(m.fn, args.data(), kInputs + 1, nullptr), 0)
      << cinn_like_get_last_error();
  for (int k = 0; k < 8; ++k) {
    double want = 0;
    for (int s = 0; s < kInputs; ++s) want += buf[8 * s + k];
    EXPECT_NEAR(buf[8 * kInputs + k], want, 1e-4);
  }
  // Inputs sharing memory with each other are fine (only read); an output on input 17 is not.
  t[3] = t[4];
  ASSERT_EQ(cinn_like_call(m.fn, args.data(), kInputs + 1, nullptr), 0)
      << cinn_like_get_last_error();
  t[kInputs] = FloatView(buf.data() + 8 * (kInputs - 1 - 17) + 4, shape);
  ASSERT_NE(cinn_like_call(m.fn, args.data(), kInputs + 1, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("overlaps input x17 (argument 17)"));
}

TEST(CallOverlap, TensorsWithNoElementOverlapNothing) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, testing::S({0, 3}), "x");
  b.MarkOutput(b.Relu(x));
  Module m(*b.Build());
  ASSERT_NE(m.fn, nullptr);
  float cell = 1.0f;
  std::vector<int64_t> shape{0, 3};
  DLTensor in = FloatView(&cell, shape), out = FloatView(&cell, shape);
  DLTensor* args[] = {&in, &out};
  EXPECT_EQ(cinn_like_call(m.fn, args, 2, nullptr), 0) << cinn_like_get_last_error();
}

}  // namespace
}  // namespace cinn_like
