/// \file Long float32 sums on the OpenCL device (issue 50, class 5): a thread that adds a whole
/// row or column does so in blocks of 4096 and sums the rest after the last block apart
/// (ir/transforms/block_reductions.h), so sums of ones past 2^24 are the float64 sum rounded
/// once to float32, as in PyTorch (tests/long_sums_cases.h).
#include <gtest/gtest.h>

#include "tests/fusion_cases.h"
#include "tests/long_sums_cases.h"
#include "tests/opencl/opencl_executor.h"

namespace cinn_like::testing {
namespace {

TEST(LongSumsOpenCL, TheRestAfterTheLastBlockIsSummedApart) {
  // 2^24 + 3 ones: the 3 of the rest, added into the total one by one, were each lost (2^24).
  CheckSumsOfOnes(RestAfterTheLastBlockCases(), OpenCLTarget(), RunOnOpenCL);
}

TEST(LongSumsOpenCL, ASumPastInt32IsExact) {
  // 2^31 + 513 ones, int64 loop indices in OpenCL C: 2^31 + 512 (without the rest's partial
  // 2^31). About a second on PoCL's CPU device.
  CheckSumsOfOnes({SumOfABroadcastScalar((int64_t{1} << 31) + 513)}, OpenCLTarget(), RunOnOpenCL);
}

}  // namespace
}  // namespace cinn_like::testing
