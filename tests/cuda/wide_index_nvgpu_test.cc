/// \file 64-bit indices in CUDA C (no GPU needed): a Program whose tensors pass 2^31 - 1
/// elements gets int64_t thread and loop indices and compiles to PTX; the same Program at a
/// small size keeps 32-bit ones. tests/gpu/wide_index_gpu_test.cc runs the large one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// The kernels of `program`'s CUDA C (the test fails unless the whole source compiles to PTX).
std::string CudaKernelsCompiledToPtx(const frontend::Program& program) {
  const ir::Target target = ir::Target::NVGPU(90);
  auto module = CompileProgramModule(program, target, "wide");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  auto compiler = backends::Compiler::Create(target);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  if (!compiler.ok()) return "";
  auto src = (*compiler)->GetSourceCode(*module);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return "";
  backends::nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, module->name);
  EXPECT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  const size_t kernels = src->find("__global__ void");  // past the runtime helpers
  return kernels == std::string::npos ? *src : src->substr(kernels);
}

TEST(WideIndexNVGPU, LargeTensorsGetInt64IndicesSmallOnesKeepInt32) {
  const std::string wide = CudaKernelsCompiledToPtx(WideInt8(2, 32768, 32771));
  EXPECT_THAT(wide, HasSubstr("int64_t"));
  EXPECT_THAT(wide, HasSubstr("= blockIdx.x;"));
  // The kernels' flat indices: no 32-bit loop or thread variable is left.
  EXPECT_THAT(wide, Not(HasSubstr("\n  int ")));
  // The broadcast bias is read at the flat index modulo its size, folded in 64 bits (an int64
  // extent unified with an int32 constant was once narrowed: the modulo vanished).
  EXPECT_THAT(wide, HasSubstr("% 32771LL]"));
  const std::string small = CudaKernelsCompiledToPtx(WideInt8(2, 4, 5));
  EXPECT_THAT(small, Not(HasSubstr("int64_t ")));
}

}  // namespace
}  // namespace cinn_like::testing
