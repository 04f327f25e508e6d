/// \file The NVGPU device code as several translation units compiled at once
/// (CodeGenCudaDev::GenerateUnits, CompilerNVGPU::Build): every kernel in exactly one unit, the
/// library kernels in the first, each unit complete on its own (it compiles with NVRTC, without
/// a GPU), one unit the single-source text; Build compiles them all before it needs a driver.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/host_ir.h"
#include "ir/flags.h"
#include "tests/cuda/fused_source.h"

namespace cinn_like::testing {
namespace {

/// Groups of several kinds, half and float: a row reduction, a column reduction, a layer norm
/// (block reduce helpers), an elementwise half group (cuda_fp16.h), a half row maximum.
Program ManyGroups() {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({64, 300}), "x");
  auto h = b.CreateInput(DType::kFloat16, S({64, 300}), "h");
  auto g = b.CreateInput(DType::kFloat32, S({300}), "g");
  b.MarkOutput(b.ReduceSum(b.Exp(x), {1}));
  b.MarkOutput(b.ReduceSum(b.Tanh(x), {0}));
  b.MarkOutput(b.LayerNorm(b.Sigmoid(x), g, g));
  b.MarkOutput(b.Relu(b.Mul(h, h)));
  b.MarkOutput(b.ReduceMax(b.Abs(h), {1}));  // a half block reduce: max(__half, __half)
  return *b.Build();
}

TEST(CudaUnits, EveryKernelInOneSelfContainedUnit) {
  auto module = CompileProgramModule(ManyGroups(), ir::Target::NVGPU(90), "many");
  ASSERT_TRUE(module.ok()) << module.status();
  auto single = backends::CodeGenCudaDev::Generate(*module);
  ASSERT_TRUE(single.ok());
  const int kernels = CountKernels(*single);
  ASSERT_GE(kernels, 3) << *single;

  auto units = backends::CodeGenCudaDev::GenerateUnits(*module, 3);
  ASSERT_TRUE(units.ok()) << units.status();
  ASSERT_EQ(units->size(), 3u);
  std::vector<std::string> names;
  backends::nvrtc::Compiler nvrtc;
  for (size_t u = 0; u < units->size(); ++u) {
    const backends::CudaUnit& unit = (*units)[u];
    EXPECT_FALSE(unit.kernels.empty()) << u;
    EXPECT_EQ(CountKernels(unit.source), static_cast<int>(unit.kernels.size())) << unit.source;
    // What a unit needs it has: the half header with kernels of halves, the block-reduce
    // helpers with kernels that call them.
    EXPECT_EQ(unit.source.find("__half") != std::string::npos,
              unit.source.find("#include <cuda_fp16.h>") != std::string::npos)
        << unit.source;
    EXPECT_EQ(unit.source.find("cinn_like_block_reduce_") != std::string::npos,
              unit.source.find("struct cinn_like_sum_op") != std::string::npos)
        << unit.source;
    for (const std::string& k : unit.kernels) {
      EXPECT_THAT(unit.source, ::testing::HasSubstr(" " + k + "(")) << k;
      names.push_back(k);
    }
    auto ptx = nvrtc.Compile(unit.source, 90, /*to_cubin=*/false, "unit" + std::to_string(u));
    EXPECT_TRUE(ptx.ok()) << ptx.status() << "\n" << unit.source;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "a kernel twice";
  EXPECT_EQ(static_cast<int>(names.size()), kernels);
  // More units than kernels asked: one per kernel.
  auto many = backends::CodeGenCudaDev::GenerateUnits(*module, 1000);
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(static_cast<int>(many->size()), kernels);
}

TEST(CudaUnits, BuildCompilesEveryUnitBeforeItNeedsADriver) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_nvrtc_compile_to_cubin = false;
  FLAGS_cinn_like_nvrtc_units = 8;  // more than this machine may lend threads: some inline
  auto module = CompileProgramModule(ManyGroups(), ir::Target::NVGPU(90), "many_built");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = (*compiler)->Build(*module);
  // With a GPU the build succeeds; without one NVRTC succeeded and loading is what fails.
  if (!built.ok()) {
    EXPECT_THAT(std::string(built.message()), ::testing::HasSubstr("loading the CUDA module"));
  }
  EXPECT_GT((*compiler)->last_build_times().nvrtc_ms, 0);
}

// The host entries of an NVGPU module are glue (ExecutionEngine::HostCode::kGlue: O1, LLVM's
// fastest code generation); they compile and link against the kernel handle slots without a
// GPU, the slots here stand-ins.
TEST(CudaUnits, HostGlueCompilesAndLinksWithFastCodeGeneration) {
  auto module = CompileProgramModule(ManyGroups(), ir::Target::NVGPU(90), "glue");
  ASSERT_TRUE(module.ok()) << module.status();
  auto units = backends::CodeGenCudaDev::GenerateUnits(*module, 1);
  ASSERT_TRUE(units.ok());
  auto objects = backends::LinkCudaHostGlue(*module, (*units)[0].kernels);
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_EQ(*objects, 1);
}

}  // namespace
}  // namespace cinn_like::testing
