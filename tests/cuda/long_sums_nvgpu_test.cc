/// \file Sums in GPU kernels without a GPU (issue 50, class 9), read from the CUDA source for
/// sm_90: float16 and bfloat16 reductions accumulate in float and round once at the store, and
/// a thread that sums a whole column adds at most 4096 rows into one accumulator at a time
/// (ir/transforms/block_reductions.h), so a float32 sum of ones stays exact past 2^24. The
/// results are checked on the GPU machine (tests/gpu/long_sums_gpu_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "absl/strings/str_cat.h"
#include "tests/cuda/fused_source.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kOdd = (int64_t{1} << 25) + 1;

/// The source's kernels, without the helpers before them.
std::string Kernels(const std::string& src) {
  size_t p = src.find("__global__");
  return p == std::string::npos ? "" : src.substr(p);
}

TEST(HalfReductionsNvgpu, AccumulateInFloatAndRoundOnce) {
  // Row sums (a block per row), column sums (a thread per column), a mean of both.
  struct Case {
    DType dt;
    Shape shape;
    int64_t axis;
    bool mean;
  };
  for (const Case& c : std::vector<Case>{{DType::kFloat16, S({64, 4096}), 1, false},
                                         {DType::kFloat16, S({4096, 64}), 0, false},
                                         {DType::kFloat16, S({64, 1000}), 1, true},
                                         {DType::kBFloat16, S({64, 4096}), 1, false},
                                         {DType::kBFloat16, S({3000, 64}), 0, true}}) {
    SCOPED_TRACE(absl::StrCat(hlir::DTypeName(c.dt), " ", hlir::ShapeToString(c.shape), " axis ",
                              c.axis, c.mean ? " mean" : " sum"));
    NetBuilder b;
    auto x = b.CreateInput(c.dt, c.shape, "x");
    b.MarkOutput(c.mean ? b.ReduceMean(x, {c.axis}) : b.ReduceSum(x, {c.axis}));
    const std::string k = Kernels(CompiledSource(*b.Build()));
    const std::string half = c.dt == DType::kFloat16 ? "__half" : "__nv_bfloat16";
    const std::string round = c.dt == DType::kFloat16 ? "__float2half_rn(" : "__float2bfloat16_rn(";
    // Every local array (accumulators, partials) is float; no 16-bit value is added to.
    const std::regex local(R"(\n\s*(\w+) (\w+)\[\d+\];)");
    int locals = 0;
    for (auto it = std::sregex_iterator(k.begin(), k.end(), local); it != std::sregex_iterator();
         ++it, ++locals) {
      EXPECT_EQ((*it)[1], "float") << (*it)[2] << " in\n" << k;
    }
    EXPECT_GT(locals, 0) << k;
    EXPECT_THAT(k, Not(HasSubstr(half + " reduce"))) << k;
    EXPECT_EQ(CountOccurrences(k, round), 1) << k;
  }
}

TEST(LongSumsNvgpu, AThreadSummingAWholeColumnAddsItInBlocks) {
  // A column mean (a thread per column) and a column sum whose rows split into no chunks, of
  // 2^25 + 1 rows: no loop adds them all into one accumulator.
  for (bool mean : {false, true}) {
    SCOPED_TRACE(mean ? "mean" : "sum");
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({kOdd, 4}), "x");
    b.MarkOutput(mean ? b.ReduceMean(x, {0}) : b.ReduceSum(x, {0}));
    const std::string k = Kernels(CompiledSource(*b.Build()));
    EXPECT_THAT(k, Not(HasSubstr(absl::StrCat("< ", kOdd, ";")))) << k;
    EXPECT_THAT(k, HasSubstr("< 4096;")) << k;
    EXPECT_THAT(k, HasSubstr(absl::StrCat("< ", (kOdd - 1) / 4096, ";"))) << k;  // the blocks
  }
}

TEST(LongSumsNvgpu, AWholeColumnOfSymbolicLengthIsBlockedAThreadsShareOfARowIsNot) {
  // Column means of [n, 4] (the sum fused with its division: a thread adds its whole column of
  // n rows): blocks of 4096 rows and a rest. Row sums of [4, n] (a block per row, each thread a
  // share of (n + 255) / 256 elements): left whole, blocking a share would only duplicate its
  // loop. (Column sums alone are two kernels of chunks of 256 rows and their partials.)
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, Shape{Sym("n"), Dim::Known(4)}, "x");
    b.MarkOutput(b.ReduceMean(x, {0}));
    const std::string k = Kernels(CompiledSource(*b.Build()));
    EXPECT_THAT(k, HasSubstr("< 4096;")) << k;
    EXPECT_THAT(k, HasSubstr("/ 4096")) << k;  // the number of blocks, n / 4096
  }
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, Shape{Dim::Known(4), Sym("n")}, "x");
    b.MarkOutput(b.ReduceSum(x, {1}));
    const std::string k = Kernels(CompiledSource(*b.Build()));
    EXPECT_THAT(k, Not(HasSubstr("4096"))) << k;
  }
}

}  // namespace
}  // namespace cinn_like::testing
