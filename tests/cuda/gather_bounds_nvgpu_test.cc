/// \file GPU index checks (no GPU needed): with FLAGS_cinn_like_check_indices the host code
/// calls cinn_like_cuda_check_indices before the kernel of a gather, index_add, one_hot or
/// check_index reads the checked copy; without it (the default: the check synchronizes) there
/// is no call and the kernel clamps or skips. tests/gpu/gather_bounds_gpu_test.cc runs the
/// gather both ways on the device.
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

/// Each op that takes user indices, read by a multiply so that a kernel follows the check.
std::vector<std::pair<std::string, frontend::Program>> IndexPrograms() {
  std::vector<std::pair<std::string, frontend::Program>> out = {{"op gather", GatherTimesTwo()}};
  {
    frontend::NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({5, 3}), "x");
    auto i = b.CreateInput(DType::kInt64, S({4}), "i");
    auto u = b.CreateInput(DType::kFloat32, S({4, 3}), "u");
    b.MarkOutput(
        b.Mul(b.Op("index_add", {x, i, u}, {{"axis", int64_t{0}}})[0], b.Fill({5, 3}, 2.0)));
    out.emplace_back("op index_add", *b.Build());
  }
  {
    frontend::NetBuilder b;
    auto i = b.CreateInput(DType::kInt32, S({4}), "i");
    b.MarkOutput(b.Mul(b.Op("one_hot", {i}, {{"depth", int64_t{6}}})[0], b.Fill({4, 6}, 2.0)));
    out.emplace_back("op one_hot", *b.Build());
  }
  {
    frontend::NetBuilder b;
    auto i = b.CreateInput(DType::kInt64, S({4}), "i");
    auto c = b.Op("check_index", {i},
                  {{"low", int64_t{-2}}, {"high", int64_t{2}}, {"what", std::string("x[i]")}});
    b.MarkOutput(b.Mul(c[0], b.Fill({4}, 2.0, DType::kInt64)));
    out.emplace_back("x[i]", *b.Build());
  }
  return out;
}

TEST(GatherBoundsNVGPU, TheFlagAddsAHostCheckBeforeTheKernel) {
  for (const auto& [says, program] : IndexPrograms())
    for (bool check : {false, true}) {
      SCOPED_TRACE(says + (check ? ": checked" : ": clamped"));
      gflags::FlagSaver saver;
      FLAGS_cinn_like_check_indices = check;
      auto module = CompileProgramModule(program, ir::Target::NVGPU(90), "index_bounds");
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
      EXPECT_THAT(*ir, HasSubstr(says));
    }
}

}  // namespace
}  // namespace cinn_like::testing
