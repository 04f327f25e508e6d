/// \file compute_at into a tensor's own buffer (Stage::ComputeAtOwnBuffer) on NVGPU without a
/// GPU: a row's mean stored from inside the kernel of the row's consumer (a block per row, its
/// columns on threads) is a store to the global output within that one kernel, which NVRTC
/// compiles. tests/backends/x86_own_buffer_test.cc checks the results on x86.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/tensor.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

TEST(OwnBufferNVGPU, ARowMeanIsStoredInsideItsConsumersKernel) {
  ir::Var m("m");
  const ir::Expr n(48);
  ir::Tensor a = ir::Placeholder("A", ir::Float(32), {m, n});
  ir::IterVar j = ir::ReduceAxis(n, "j");
  ir::Tensor s = ir::Compute(
      {m}, [&](const std::vector<ir::Expr>& i) { return ir::ReduceSum(a(i[0], j.var), {j}); }, "S");
  ir::Tensor mean = ir::Compute(
      {m}, [&](const std::vector<ir::Expr>& i) { return s(i[0]) / 48.0f; }, "MEAN");
  ir::Tensor y = ir::Compute(
      {m, n}, [&](const std::vector<ir::Expr>& i) { return a(i[0], i[1]) - mean(i[0]); }, "Y");
  auto sch = ir::Schedule::Create({mean, y});
  auto row = sch[y].LeafAxis(0);
  auto col = sch[y].LeafAxis(1);
  ASSERT_TRUE(row.ok() && col.ok());
  ASSERT_TRUE(sch[y].Bind(*row, "blockIdx.x").ok());
  ASSERT_TRUE(sch[y].Bind(*col, "threadIdx.x").ok());
  absl::Status st = sch[mean].ComputeAtOwnBuffer(sch[y], *row);
  ASSERT_TRUE(st.ok()) << st;
  st = sch[s].ComputeAt(sch[y], *row);
  ASSERT_TRUE(st.ok()) << st;
  auto f = ir::Lower("mean_centered", {a, mean, y}, sch, ir::Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode({"mean_centered", ir::Target::NVGPU(90), {*f}});
  ASSERT_TRUE(src.ok()) << src.status();
  // One kernel writes both outputs: MEAN from inside Y's row.
  const size_t first = src->find("__global__");
  ASSERT_NE(first, std::string::npos) << *src;
  EXPECT_EQ(src->find("__global__", first + 1), std::string::npos) << *src;
  EXPECT_THAT(*src, HasSubstr("int32_t i = blockIdx.x;")) << *src;
  EXPECT_THAT(*src, HasSubstr("MEAN[i] = S[0] / 48.0f;")) << *src;  // every thread, one value
  EXPECT_THAT(*src, HasSubstr("- MEAN[i];")) << *src;               // read back in the row
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "mean_centered");
  EXPECT_TRUE(ptx.ok()) << ptx.status();
}

}  // namespace
}  // namespace cinn_like::backends
