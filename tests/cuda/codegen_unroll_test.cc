/// \file Unroll as a backend hint: Stage::Unroll(axis, /*full=*/false) keeps the loop and CUDA
/// prints `#pragma unroll` before it; the default still expands the body, and copies of a body
/// that declares local arrays declare them in scopes of their own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ir/lower.h"
#include "ir/printer.h"
#include "ir/schedule.h"
#include "ir/tensor.h"
#include "tests/unrolled_sums_module.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// C[i, j] = A[i, j] * 2 over (n, 8), i bound to blocks of 64 threads, j unrolled.
absl::StatusOr<std::string> UnrolledCuda(bool full, std::string* ir_text) {
  ir::Var n("n");
  ir::Tensor a = ir::Placeholder("A", ir::Float(32), {n, ir::Expr(8)});
  ir::Tensor c = ir::Compute(
      {n, ir::Expr(8)}, [&](const std::vector<ir::Expr>& i) { return a(i[0], i[1]) * 2.0f; }, "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  auto i = s.LeafAxis(0);
  auto j = s.LeafAxis(1);
  auto parts = s.Split(*i, 64);
  if (!parts.ok()) return parts.status();
  if (auto st = s.Bind(parts->first, "blockIdx.x"); !st.ok()) return st;
  if (auto st = s.Bind(parts->second, "threadIdx.x"); !st.ok()) return st;
  if (auto st = s.Unroll(*j, full); !st.ok()) return st;
  auto f = ir::Lower("scale", {a, c}, sch, ir::Target::NVGPU(90));
  if (!f.ok()) return f.status();
  *ir_text = ir::ToString(**f);  // the host entry and its kernel
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  if (!compiler.ok()) return compiler.status();
  return (*compiler)->GetSourceCode({"scale", ir::Target::NVGPU(90), {*f}});
}

TEST(CodeGenCudaUnroll, HintKeepsTheLoopUnderPragmaUnroll) {
  std::string ir;
  auto src = UnrolledCuda(/*full=*/false, &ir);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(ir, HasSubstr("unroll_hint for (j, 0, 8) {"));
  EXPECT_THAT(*src, HasSubstr("  #pragma unroll\n  for (int32_t j = 0; j < 8; ++j) {\n"));
}

TEST(CodeGenCudaUnroll, FullUnrollExpandsTheBody) {
  std::string ir;
  auto src = UnrolledCuda(/*full=*/true, &ir);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, Not(HasSubstr("#pragma unroll")));
  EXPECT_THAT(*src, Not(HasSubstr("for (int32_t j")));
  EXPECT_THAT(*src, HasSubstr("C[idx1 + 7] = A[idx1 + 7] * 2.0f;"));
}

TEST(CodeGenCudaUnroll, CopiesOfABlockedSumDeclareTheirPartialsInScopesOfTheirOwn) {
  // Each copy of the unrolled loop's body allocates C_block and C_tail beside the other copy's:
  // one C scope held both declarations, and NVRTC refused them ("C_tail" has already been
  // declared in the current scope).
  auto f = testing::UnrolledBlockedSums(ir::Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode({"unrolled_sums", ir::Target::NVGPU(90), {*f}});
  ASSERT_TRUE(src.ok()) << src.status();
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "unrolled_sums");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr(".entry unrolled_sums_kernel"));
  // Each partial declared twice, each time first in a scope of its own.
  for (const std::string name : {"C_block", "C_tail"}) {
    const std::string decl = "{\n    float " + name + "[1];\n";
    const size_t first = src->find(decl);
    ASSERT_NE(first, std::string::npos) << name << " in\n" << *src;
    EXPECT_NE(src->find(decl, first + 1), std::string::npos) << name << " in\n" << *src;
  }
}

}  // namespace
}  // namespace cinn_like::backends
