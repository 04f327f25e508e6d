/// \file The NVGPU Compiler without a GPU: arch choice and its errors, GetSourceCode, and the
/// clear error Build gives at the module-load step when there is no driver.
#include "backends/cuda/compiler_nvgpu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/flags.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/cuda/vector_add_module.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

bool HaveDriver() { return runtime::cuda::Driver().ok(); }

TEST(CompilerNVGPU, GetSourceCodeNeedsNoGpu) {
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  EXPECT_EQ((*compiler)->target().cuda_arch, 90);
  auto src = (*compiler)->GetSourceCode(testing::GpuVectorAdd());
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("extern \"C\" __global__ void __launch_bounds__(64) myadd_kernel("));
}

TEST(CompilerNVGPU, ArchFromTheFlag) {
  std::string saved = FLAGS_cinn_like_cuda_arch;
  FLAGS_cinn_like_cuda_arch = "sm_80";
  auto compiler = Compiler::Create(ir::Target::NVGPU());
  FLAGS_cinn_like_cuda_arch = saved;
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  EXPECT_EQ((*compiler)->target().cuda_arch, 80);
}

TEST(CompilerNVGPU, BuildWithoutDriverFailsAtModuleLoad) {
  if (HaveDriver()) GTEST_SKIP() << "a CUDA driver is present; tests/gpu covers Build";
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status s = (*compiler)->Build(testing::GpuVectorAdd());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("loading the CUDA module of myadd: no CUDA driver: dlopen(libcuda.so.1) "
                        "failed"));
  const CompileTimes& t = (*compiler)->last_build_times();
  EXPECT_GT(t.nvrtc_ms, 0);
}

TEST(CompilerNVGPUError, UnsupportedTargetArchNamesOrigin) {
  auto compiler = Compiler::Create(ir::Target::NVGPU(30));
  ASSERT_FALSE(compiler.ok());
  EXPECT_THAT(std::string(compiler.status().message()),
              HasSubstr("CUDA arch sm_30 (from the target) is not supported by NVRTC 13.0"));
}

TEST(CompilerNVGPUError, BadFlagArch) {
  std::string saved = FLAGS_cinn_like_cuda_arch;
  FLAGS_cinn_like_cuda_arch = "sm_35";
  auto unsupported = Compiler::Create(ir::Target::NVGPU());
  FLAGS_cinn_like_cuda_arch = "ampere";
  auto garbage = Compiler::Create(ir::Target::NVGPU());
  FLAGS_cinn_like_cuda_arch = saved;
  ASSERT_FALSE(unsupported.ok());
  EXPECT_THAT(std::string(unsupported.status().message()),
              HasSubstr("CUDA arch sm_35 (from the flag cinn_like_cuda_arch) is not supported"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(std::string(garbage.status().message()),
              HasSubstr("flag cinn_like_cuda_arch is 'ampere'; expected an arch such as sm_90"));
}

TEST(CompilerNVGPUError, NoArchAnywhereWithoutDevice) {
  if (HaveDriver()) GTEST_SKIP() << "a CUDA driver is present";
  std::string saved = FLAGS_cinn_like_cuda_arch;
  FLAGS_cinn_like_cuda_arch = "";
  auto compiler = Compiler::Create(ir::Target::NVGPU());
  FLAGS_cinn_like_cuda_arch = saved;
  ASSERT_FALSE(compiler.ok());
  EXPECT_THAT(std::string(compiler.status().message()),
              HasSubstr("no CUDA arch for the NVGPU target"));
  EXPECT_THAT(std::string(compiler.status().message()), HasSubstr("no CUDA driver"));
}

TEST(CudaRuntimeError, WithoutDriverCallsFailWithAMessage) {
  if (HaveDriver()) GTEST_SKIP() << "a CUDA driver is present";
  void* p = nullptr;
  EXPECT_NE(cinn_like_cuda_malloc(&p, 16), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("no CUDA driver"));
  int dummy = 0;
  EXPECT_NE(
      cinn_like_cuda_launch(&dummy, "myadd_kernel", 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, 0), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("launch of kernel myadd_kernel: no CUDA driver"));
  // An empty tensor launches nothing and succeeds, driver or not.
  EXPECT_EQ(
      cinn_like_cuda_launch(&dummy, "myadd_kernel", 0, 1, 1, 64, 1, 1, 0, nullptr, nullptr, 0), 0);
}

}  // namespace
}  // namespace cinn_like::backends
