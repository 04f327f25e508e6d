/// \file The shared-memory schedules in CUDA C: `__shared__` tiles, `__syncthreads()` barriers
/// around each k slice, a register accumulator array, and NVRTC compiling it for sm_90.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "cinn_like/examples.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

std::string MatmulSharedSource(int size, const examples::MatmulSharedConfig& config) {
  auto f = examples::BuildMatmulShared(ir::Target::NVGPU(90), size, config, "mm");
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return "";
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  auto source = (*compiler)->GetSourceCode({"mm", ir::Target::NVGPU(90), {*f}});
  EXPECT_TRUE(source.ok()) << source.status();
  return source.ok() ? *source : "";
}

TEST(CodeGenSchedule, SharedTilesBarriersAndRegisterAccumulators) {
  std::string src = MatmulSharedSource(1024, {});
  EXPECT_THAT(src, HasSubstr("__launch_bounds__(256) mm_kernel("));
  EXPECT_THAT(src, HasSubstr("__shared__ float A_shared[1024];"));
  EXPECT_THAT(src, HasSubstr("__shared__ float B_shared[1024];"));
  EXPECT_THAT(src, HasSubstr("  float C_local[64];\n"));
  EXPECT_THAT(src, HasSubstr("int32_t i_outer = blockIdx.y;"));
  EXPECT_THAT(src, HasSubstr("int32_t j_inner_outer = threadIdx.x;"));
  // Register accumulators: constant indices only (the tile loops are unrolled).
  EXPECT_THAT(src, HasSubstr("C_local[63] = C_local[63] + A_shared["));
  // Two barriers per k slice: after the copies, after the products.
  size_t first = src.find("__syncthreads();");
  ASSERT_NE(first, std::string::npos);
  size_t second = src.find("__syncthreads();", first + 1);
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(src.find("__syncthreads();", second + 1), std::string::npos);
  EXPECT_LT(src.rfind("B_shared[", first), first);
  EXPECT_NE(src.find("C_local[0] = C_local[0] + A_shared[", first), std::string::npos);
  EXPECT_LT(src.find("C_local[0] = C_local[0] + A_shared[", first), second);
}

TEST(CodeGenSchedule, NvrtcCompilesTheSharedMatmulForSm90) {
  for (auto config : {examples::MatmulSharedConfig{}, examples::MatmulSharedConfig{64, 4, 16}}) {
    std::string src = MatmulSharedSource(1024, config);
    ASSERT_FALSE(src.empty());
    nvrtc::Compiler nvrtc;
    auto ptx = nvrtc.Compile(src, 90, /*to_cubin=*/false, "mm");
    ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << src;
    EXPECT_THAT(*ptx, HasSubstr(".shared"));
    EXPECT_THAT(*ptx, HasSubstr("bar.sync"));
  }
}

}  // namespace
}  // namespace cinn_like::backends
