/// \file GPU machine only: with FLAGS_cinn_like_check_indices a gather's out-of-range index is
/// an error naming the op and the value (the check synchronizes); the call after it works.
/// Without the flag GPU gathers clamp, and the call succeeds.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "backends/compiler.h"
#include "ir/flags.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/fusion_cases.h"
#include "tests/gpu/device_buffer.h"

namespace cinn_like::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(GatherBoundsGpu, WithTheFlagAnIndexOutOfRangeIsAnError) {
  for (bool check : {true, false}) {
    SCOPED_TRACE(check ? "checked" : "clamped");
    gflags::FlagSaver saver;
    FLAGS_cinn_like_check_indices = check;
    auto module = CompileProgramModule(GatherTimesTwo(), ir::Target::NVGPU(), "gather_bounds");
    ASSERT_TRUE(module.ok()) << module.status();
    auto compiler = backends::Compiler::Create(ir::Target::NVGPU());
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    ASSERT_TRUE((*compiler)->Build(*module).ok());
    auto fn = (*compiler)->Lookup("gather_bounds");
    ASSERT_TRUE(fn.ok()) << fn.status();

    std::vector<float> x(15);
    for (size_t k = 0; k < x.size(); ++k) x[k] = 0.25f * static_cast<float>(k) - 1.0f;
    DeviceBuffer dx(x.size() * 4), di(4 * 8), dy(12 * 4);
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(dx.get(), x.data(), x.size() * 4), 0);
    std::vector<int64_t> xs{5, 3}, is{4}, ys{4, 3};
    DLTensor tx = DeviceTensor(dx.get(), xs, {kDLFloat, 32, 1});
    DLTensor ti = DeviceTensor(di.get(), is, {kDLInt, 64, 1});
    DLTensor ty = DeviceTensor(dy.get(), ys, {kDLFloat, 32, 1});
    DLTensor* args[] = {&tx, &ti, &ty};
    auto call = [&](std::vector<int64_t> index) {
      EXPECT_EQ(cinn_like_cuda_memcpy_to_device(di.get(), index.data(), 32), 0);
      int rc = (*fn)(args, 3, nullptr);
      if (rc == 0) rc = cinn_like_cuda_synchronize();
      return rc;
    };
    auto expect_good = [&](std::vector<int64_t> index) {
      ASSERT_EQ(call(index), 0) << cinn_like_get_last_error();
      std::vector<float> y(12);
      ASSERT_EQ(cinn_like_cuda_memcpy_to_host(y.data(), dy.get(), 48), 0);
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 3; ++c) EXPECT_EQ(y[r * 3 + c], 2 * x[index[r] * 3 + c]);
      }
    };
    expect_good({4, 0, 2, 2});
    if (check) {
      EXPECT_NE(call({1, 2, 7, 0}), 0);
      EXPECT_THAT(cinn_like_get_last_error(),
                  AllOf(HasSubstr("op gather"), HasSubstr("index 7 (at position 2)"),
                        HasSubstr("out of range [0, 5)"), HasSubstr("float32[5, 3]")));
      EXPECT_NE(call({-3, 2, 1, 0}), 0);
      EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("index -3 (at position 0)"));
    } else {
      EXPECT_EQ(call({1, 2, 7, 0}), 0) << cinn_like_get_last_error();  // clamped, no check
    }
    expect_good({3, 3, 1, 4});
  }
}

}  // namespace
}  // namespace cinn_like::testing
