/// \file The scans' loop nests (hlir/ops/scan_compute.cc) as each target gets them: on NVGPU a
/// thread per line walking its axis in a serial loop that carries the running value in a
/// register (never a block reduce or a bound scanned axis), on x86 a parallel loop of lines
/// around the same serial walk. No GPU needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "ir/module.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<ir::Module> CompileCase(const OpCase& c, const ir::Target& target) {
  auto graph = CaseGraph(c);
  if (!graph.ok()) return graph.status();
  return hlir::CompileGraph(*graph, target, "scan");
}

TEST(ScanCodegen, NvgpuThreadPerLineWalksTheAxisSerially) {
  const ir::Target target = ir::Target::NVGPU(90);
  auto module = CompileCase(
      {"cummax", {DType::kFloat16}, {S({64, 3, 501})}, {{"axis", int64_t{1}}}, {}}, target);
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(target);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode(*module);
  ASSERT_TRUE(src.ok()) << src.status();
  // Two kernels (values, indices), 32064 lines over 256-thread blocks (the last one guarded),
  // a serial walk of 3.
  EXPECT_THAT(*src, HasSubstr("line_block * 256 + line_thread"));
  EXPECT_THAT(*src, HasSubstr("if (line < 32064)"));
  EXPECT_THAT(*src, HasSubstr("for (int32_t k = 0; k < 3; ++k)"));
  EXPECT_THAT(*src, ContainsRegex("float [a-z0-9_]+_running\\[1\\];"));  // float32 running max
  EXPECT_THAT(*src, ContainsRegex("int64_t [a-z0-9_]+_index\\[1\\];"));
  EXPECT_THAT(*src, Not(HasSubstr("block_reduce")));
  EXPECT_THAT(*src, Not(HasSubstr("__syncthreads")));
}

TEST(ScanCodegen, NvgpuFewLinesGetOneWarp) {
  const ir::Target target = ir::Target::NVGPU(90);
  auto module = CompileCase(
      {"cumsum", {DType::kFloat32}, {S({5, 4000})}, {{"axis", int64_t{-1}}}, {}}, target);
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(target);
  auto src = (*compiler)->GetSourceCode(*module);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("__launch_bounds__(32)"));
  EXPECT_THAT(*src, HasSubstr("for (int32_t k = 0; k < 4000; ++k)"));
}

TEST(ScanCodegen, X86RunsLinesInParallelAndShortScansSerially) {
  auto big =
      CompileCase({"logcumsumexp", {DType::kFloat32}, {S({64, 100})}, {{"axis", int64_t{0}}}, {}},
                  ir::Target::X86());
  ASSERT_TRUE(big.ok()) << big.status();
  const std::string ir = ir::ToString(*big);
  EXPECT_THAT(ir, HasSubstr("parallel for (line, 0, 100)"));
  EXPECT_THAT(ir, HasSubstr("for (k, 0, 64)"));
  auto small = CompileCase({"cumprod", {DType::kInt32}, {S({4, 9})}, {{"axis", int64_t{1}}}, {}},
                           ir::Target::X86());
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_THAT(ir::ToString(*small), Not(HasSubstr("parallel")));
}

}  // namespace
}  // namespace cinn_like::testing
