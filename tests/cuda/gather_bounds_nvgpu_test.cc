/// \file GPU gathers and their index check (no GPU needed): with FLAGS_cinn_like_check_indices
/// the host code calls cinn_like_cuda_check_indices before the gather's kernel reads the
/// checked copy; without it (the default: the check synchronizes) there is no call and the
/// kernel clamps. tests/gpu/gather_bounds_gpu_test.cc runs both on the device.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/llvm/host_ir.h"
#include "ir/flags.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GatherBoundsNVGPU, TheFlagAddsAHostCheckBeforeTheKernel) {
  for (bool check : {false, true}) {
    SCOPED_TRACE(check ? "checked" : "clamped");
    gflags::FlagSaver saver;
    FLAGS_cinn_like_check_indices = check;
    auto module = CompileProgramModule(GatherTimesTwo(), ir::Target::NVGPU(90), "gather_bounds");
    ASSERT_TRUE(module.ok()) << module.status();
    auto ir = backends::CudaHostIR(*module);
    ASSERT_TRUE(ir.ok()) << ir.status();
    if (!check) {
      EXPECT_THAT(*ir, Not(HasSubstr("cinn_like_cuda_check_indices")));
      continue;
    }
    const size_t at = ir->find("call i32 @cinn_like_cuda_check_indices(");
    ASSERT_NE(at, std::string::npos) << *ir;
    EXPECT_LT(at, ir->find("call i32 @cinn_like_cuda_launch(")) << *ir;
    EXPECT_THAT(*ir, HasSubstr("op gather"));
  }
}

}  // namespace
}  // namespace cinn_like::testing
