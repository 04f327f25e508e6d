/// \file GPU machine only: long float32 sums on the GPU (issue 50, class 9). A thread that sums a
/// whole column (a column mean, a column sum whose rows split into no chunks) adds its rows in
/// blocks of partials (ir/transforms/block_reductions.h), so sums of 2^25 ones are exact as in
/// PyTorch (tests/long_sums_cases.h); long sums of random data still match the reference.
#include <gtest/gtest.h>

#include "tests/fusion_cases.h"
#include "tests/gpu_executor.h"
#include "tests/long_sums_cases.h"

namespace cinn_like::testing {
namespace {

const ir::Target kGpu = ir::Target::NVGPU();

TEST(LongSumsGpu, SumsOfOnesPastTwoToThe24AreExact) { CheckLongSumsOfOnes(kGpu, RunOnGpu); }

TEST(LongSumsGpu, TheRestAfterTheLastBlockIsSummedApart) {
  // 2^24 + 3 ones: the 3 of the rest, added into the total one by one, were each lost (2^24).
  CheckSumsOfOnes(RestAfterTheLastBlockCases(), kGpu, RunOnGpu);
}

TEST(LongSumsGpu, ColumnsOfASymbolicNumberOfRowsSumExactly) {
  // [n, 4] bound to n = 2^25 + 1 at the call. The mean is a thread per column adding its n rows:
  // in blocks (a loop of the whole symbolic length is blocked on GPUs too), so it is 1 (one
  // accumulator stops at 2^24: about 0.5). The sum is two kernels (chunks of 256 rows, then
  // their partials, multiples of 256: exact either way): float32(n).
  constexpr int64_t kOdd = (int64_t{1} << 25) + 1;
  for (bool mean : {false, true}) {
    SCOPED_TRACE(mean ? "mean" : "sum");
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, Shape{Sym("n"), Dim::Known(4)}, "x");
    b.MarkOutput(mean ? b.ReduceMean(x, {0}) : b.ReduceSum(x, {0}));
    std::vector<double> got = RunFilled(*b.Build(), kGpu, RunOnGpu, 1.0, {{"n", kOdd}});
    ASSERT_EQ(got.size(), 4u);
    for (double g : got) EXPECT_EQ(g, mean ? 1.0 : static_cast<double>(static_cast<float>(kOdd)));
  }
}

TEST(LongSumsGpu, LongColumnSumsAndMeansOfRandomDataMatchTheReference) {
  // Odd row counts (no chunks): a thread per column, its rows in blocks and a rest.
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    for (bool mean : {false, true}) {
      for (const Shape& shape : {S({70001, 24}), S({3 * 4096 + 5, 3, 8})}) {
        SCOPED_TRACE(hlir::ShapeToString(shape) + (mean ? " mean " : " sum ") +
                     hlir::DTypeName(dt));
        NetBuilder b;
        auto x = b.CreateInput(dt, shape, "x");
        b.MarkOutput(mean ? b.ReduceMean(x, {0}) : b.ReduceSum(x, {0}));
        RunProgramCase(*b.Build(), kGpu, RunOnGpu, dt == DType::kFloat16 ? 1e-3 : 1e-4);
      }
    }
  }
}

}  // namespace
}  // namespace cinn_like::testing
