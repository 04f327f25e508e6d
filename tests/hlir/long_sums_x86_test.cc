/// \file Long float32 sums on x86 (issue 50, class 5): sums of 2^25 ones are 2^25 as in
/// PyTorch, where one accumulator stops at 2^24 (tests/long_sums_cases.h); long sums of random
/// data still match the reference.
#include <gtest/gtest.h>

#include "tests/fusion_cases.h"
#include "tests/long_sums_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

const ir::Target kX86 = ir::Target::X86();

TEST(LongSumsX86, SumsOfOnesPastTwoToThe24AreExact) { CheckLongSumsOfOnes(kX86, RunOnX86); }

TEST(LongSumsX86, TheRestAfterTheLastBlockIsSummedApart) {
  // 2^24 + 3 ones: the 3 of the rest, added into the total one by one, were each lost (2^24).
  CheckSumsOfOnes(RestAfterTheLastBlockCases(), kX86, RunOnX86);
}

TEST(LongSumsX86, LongSumsOfRandomDataMatchTheReference) {
  // Rows and columns of a few blocks plus a rest, the tails of the vectors included.
  for (auto [shape, axis] : std::vector<std::pair<Shape, int64_t>>{{S({3, 3 * 4096 * 64 + 77}), 1},
                                                                   {S({70001}), 0},
                                                                   {S({9001, 24}), 0},
                                                                   {S({2, 20000, 3}), 1}}) {
    SCOPED_TRACE(hlir::ShapeToString(shape));
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, shape, "x");
    b.MarkOutput(b.ReduceSum(x, {axis}, /*keepdim=*/true));
    RunProgramCase(*b.Build(), kX86, RunOnX86);
  }
}

}  // namespace
}  // namespace cinn_like::testing
