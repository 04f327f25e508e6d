/// \file NVGPU without a GPU, on the seeds as lowering builds them: the host/device split, the
/// CUDA C of the seeds, their NVRTC compilation to PTX and to CUBIN for sm_90, the arch errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ir/flags.h"
#include "ir/printer.h"
#include "ir/transforms/split_host_device.h"
#include "tools/examples.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ir::Module SeedModule(const std::string& name) {
  auto ex = examples::Find(name);
  EXPECT_TRUE(ex.ok()) << ex.status();
  auto f = ex->build(ir::Target::NVGPU(90));
  EXPECT_TRUE(f.ok()) << f.status();
  return {name, ir::Target::NVGPU(90), {*f}};
}

TEST(SeedSplitHostDevice, VectorAddBecomesOneKernelAndOneLaunch) {
  ir::Module m = SeedModule("myadd");  // split by ir::Lower
  ASSERT_EQ(m.functions[0]->kernels.size(), 1u);
  const auto& kernel = *m.functions[0]->kernels[0];
  EXPECT_EQ(kernel.name, "myadd_kernel");
  EXPECT_EQ(ir::ToString(kernel.grid_dims[0]), "((n + 63) / 64)");
  EXPECT_EQ(ir::ToString(kernel.block_dims[0]), "64");
  ASSERT_EQ(kernel.args.size(), 4u);  // A, B, C, n
  EXPECT_EQ(kernel.args[3].name(), "n");
  EXPECT_EQ(ir::ToString(m.functions[0]->body),
            "launch_kernel(\"myadd_kernel\", ((n + 63) / 64), 1, 1, 64, 1, 1, 0, A, B, C, n)\n");
}

TEST(SeedSplitHostDeviceError, UnboundLoopNestIsAnError) {
  auto ex = examples::Find("myadd");
  auto f = ex->build(ir::Target::X86());  // no bindings
  ASSERT_TRUE(f.ok());
  auto split = ir::SplitHostDevice(**f);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().message(),
            "function myadd: a loop nest writing C has no GPU binding; bind its loops to "
            "blockIdx/threadIdx");
}

TEST(SeedCodeGenCuda, VectorAddIsOneReadableKernelWithAGuardedTail) {
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto source = (*compiler)->GetSourceCode(SeedModule("myadd"));
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT(*source,
              HasSubstr("extern \"C\" __global__ void __launch_bounds__(64) myadd_kernel(const "
                        "float* __restrict__ A, const float* __restrict__ B, float* __restrict__ "
                        "C, int32_t n) {\n"
                        "  int32_t i_outer = blockIdx.x;\n"
                        "  const int32_t idx0 = i_outer * 64;\n"
                        "  int32_t i_inner = threadIdx.x;\n"
                        "  if (idx0 + i_inner < n) {\n"
                        "    C[idx0 + i_inner] = A[idx0 + i_inner] + B[idx0 + i_inner];\n"
                        "  }\n"
                        "}\n"));
  EXPECT_THAT(*source, Not(HasSubstr("if (i_outer <")));  // launch dims need no guard
}

class SeedsToPtxAndCubin : public ::testing::TestWithParam<std::string> {};

TEST_P(SeedsToPtxAndCubin, NvrtcCompilesEverySeed) {
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto source = (*compiler)->GetSourceCode(SeedModule(GetParam()));
  ASSERT_TRUE(source.ok()) << source.status();
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*source, 90, /*to_cubin=*/false, GetParam());
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr(".entry " + GetParam() + "_kernel"));
  auto cubin = nvrtc.Compile(*source, 90, /*to_cubin=*/true, GetParam());
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(cubin->substr(0, 4),
            "\x7f"
            "ELF");
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedsToPtxAndCubin, ::testing::ValuesIn(examples::Names()),
                         [](const auto& info) { return info.param; });

TEST(SeedCompilerNvgpuError, UnsupportedArchNamesTheArchAndTheNvrtcVersion) {
  auto compiler = Compiler::Create(ir::Target::NVGPU(30));
  ASSERT_FALSE(compiler.ok());
  std::string msg(compiler.status().message());
  EXPECT_THAT(msg, HasSubstr("sm_30"));
  EXPECT_THAT(msg, HasSubstr("the target"));
  EXPECT_THAT(msg, HasSubstr("NVRTC " + nvrtc::Compiler::Version()));
  EXPECT_THAT(msg, Not(HasSubstr("invalid value for --gpu-architecture")));
}

TEST(SeedCompilerNvgpuError, ArchFlagIsChecked) {
  std::string error;
  ASSERT_TRUE(SetFlag("cinn_like_cuda_arch", "sm_35", &error));
  auto compiler = Compiler::Create(ir::Target::NVGPU());  // the target names no arch
  ASSERT_TRUE(SetFlag("cinn_like_cuda_arch", "", &error));
  ASSERT_FALSE(compiler.ok());
  EXPECT_THAT(compiler.status().message(), HasSubstr("sm_35"));
  EXPECT_THAT(compiler.status().message(), HasSubstr("the flag cinn_like_cuda_arch"));
}

TEST(SeedCompilerNvgpu, BuildWithoutAGpuFailsCleanlyAfterCompiling) {
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok());
  absl::Status st = (*compiler)->Build(SeedModule("myadd"));
  if (st.ok()) GTEST_SKIP() << "a GPU is present; gpu_tests cover the run";
  EXPECT_THAT(st.message(), HasSubstr("libcuda"));
  EXPECT_GT((*compiler)->last_build_times().nvrtc_ms, 0);  // steps 1-3 ran
}

}  // namespace
}  // namespace cinn_like::backends
