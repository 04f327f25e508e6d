/// \file CodeGenCudaDev: what the emitted CUDA C must contain (signatures, bindings, guards,
/// parentheses, literals), and what it refuses.
#include "backends/cuda/codegen_cuda_dev.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/transforms/split_host_device.h"
#include "tests/cuda/vector_add_module.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

/// The CUDA C of a module of hand-built host entries, split first as ir::Lower would.
absl::StatusOr<std::string> CudaOf(ir::Module m) {
  for (ir::LoweredFunc& f : m.functions) {
    auto split = ir::SplitHostDevice(*f);
    if (!split.ok()) return split.status();
    f = *split;
  }
  return CodeGenCudaDev::Generate(m);
}

/// A one-kernel module: `body` under a threadIdx.x loop over 32 writing float32 buffer Out.
ir::Module OneThreadLoop(ir::Var tx, ir::Buffer out, ir::Stmt body,
                         std::vector<ir::Argument> more = {}) {
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "k";
  f->args = std::move(more);
  f->args.push_back(ir::Argument::Output(out));
  f->body = ir::For::Make(tx, 0, 32, ir::ForKind::kGpuThread, body, 0);
  return ir::Module{"k", ir::Target::NVGPU(90), {f}};
}

TEST(CodeGenCuda, VectorAddIsOneGuardedKernel) {
  auto src = CodeGenCudaDev::Generate(testing::GpuVectorAdd());
  ASSERT_TRUE(src.ok()) << src.status();
  const std::string expected_kernel =
      "extern \"C\" __global__ void __launch_bounds__(64) myadd_kernel("
      "const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, "
      "int32_t n) {\n"
      "  int32_t i_outer = blockIdx.x;\n"
      "  int32_t i_inner = threadIdx.x;\n"
      "  if (i_outer * 64 + i_inner < n) {\n"
      "    C[i_outer * 64 + i_inner] = A[i_outer * 64 + i_inner] + B[i_outer * 64 + i_inner];\n"
      "  }\n"
      "}\n";
  EXPECT_THAT(*src, HasSubstr(expected_kernel)) << *src;
  EXPECT_EQ(src->find("__global__", src->find("__global__") + 1), std::string::npos) << *src;
  // The launch dims are the loops' extents, so neither loop needs its own guard.
  EXPECT_EQ(src->find("if (i_outer <"), std::string::npos) << *src;
  EXPECT_EQ(src->find("if (i_inner <"), std::string::npos) << *src;
}

TEST(CodeGenCuda, LoopShorterThanTheLaunchIsGuarded) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  ir::Var j("j"), t("t");
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "g";
  f->args = {ir::Argument::Output(a)};
  // One kernel (one top-level nest) whose two thread loops differ in extent.
  f->body =
      ir::For::Make(ir::Var("bx"), 0, 2, ir::ForKind::kGpuBlock,
                    ir::Block::Make({ir::For::Make(j, 0, 32, ir::ForKind::kGpuThread,
                                                   ir::Store::Make(a, {j}, ir::Expr(1.0f)), 0),
                                     ir::For::Make(t, 0, 128, ir::ForKind::kGpuThread,
                                                   ir::Store::Make(a, {t}, ir::Expr(2.5f)), 0)}),
                    0);
  auto src = CudaOf(ir::Module{"g", ir::Target::NVGPU(90), {f}});
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("__launch_bounds__(128)"));
  EXPECT_THAT(*src, HasSubstr("    int32_t j = threadIdx.x;\n    if (j < 32) {\n")) << *src;
  EXPECT_EQ(src->find("if (t <"), std::string::npos) << *src;
  EXPECT_THAT(*src, HasSubstr("A[t] = 2.5f;"));
  EXPECT_THAT(*src, HasSubstr("A[j] = 1.0f;"));
}

TEST(CodeGenCuda, MinimalParenthesesKeepTheIrStructure) {
  ir::Var n("n");
  auto x = ir::MakeBuffer("X", ir::Float(32), {n});
  auto out = ir::MakeBuffer("Out", ir::Float(32), {n});
  ir::Var tx("tx");
  ir::Expr xv = ir::Load::Make(x, {tx});
  ir::Expr value = (xv + ir::Expr(1.0f)) * (xv - (xv - ir::Expr(0.5f))) / ir::Expr(3.0f) +
                   ir::Select::Make(xv > ir::Expr(0.0f), ir::Call::Make(ir::Float(32), "exp", {xv}),
                                    ir::Cast::Make(ir::Float(32), (tx + 1) % 7 / 2));
  auto m = OneThreadLoop(tx, out, ir::Store::Make(out, {tx}, value), {ir::Argument::Input(x)});
  auto src = CudaOf(m);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("Out[tx] = (X[tx] + 1.0f) * (X[tx] - (X[tx] - 0.5f)) / 3.0f + "
                              "(X[tx] > 0.0f ? expf(X[tx]) : (float)((tx + 1) % 7 / 2));"))
      << *src;
}

TEST(CodeGenCuda, SerialAndUnrolledLoopsAndSharedMemory) {
  auto out = ir::MakeBuffer("Out", ir::Float(32), {32});
  auto tile = ir::MakeBuffer("tile", ir::Float(32), {4, 8}, ir::MemoryScope::kShared);
  ir::Var tx("tx"), k("k"), u("u");
  ir::Stmt body = ir::Allocate::Make(
      tile,
      ir::Block::Make({ir::Store::Make(tile, {tx}, ir::Cast::Make(ir::Float(32), tx)),
                       ir::For::Make(k, 0, 4, ir::ForKind::kUnrolled,
                                     ir::Store::Make(out, {tx}, ir::Load::Make(tile, {k * 8}))),
                       ir::For::Make(u, 2, 3, ir::ForKind::kSerial,
                                     ir::Store::Make(out, {tx}, ir::Expr(-1.0f)))}));
  auto src = CudaOf(OneThreadLoop(tx, out, body));
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("__shared__ float tile[32];")) << *src;
  EXPECT_THAT(*src, HasSubstr("#pragma unroll\n  for (int32_t k = 0; k < 4; ++k) {\n")) << *src;
  EXPECT_THAT(*src, HasSubstr("for (int32_t u = 2; u < 2 + 3; ++u) {")) << *src;
  EXPECT_THAT(*src, HasSubstr("Out[tx] = -1.0f;")) << *src;
}

TEST(CodeGenCudaError, VectorStoreThroughAScalarIndexIsAnError) {
  // Vector stores print as float4 and the like (codegen_vector_test.cc); a vector value
  // stored through a scalar index is malformed IR.
  auto out = ir::MakeBuffer("Out", ir::Float(32), {128});
  ir::Var tx("tx");
  ir::Stmt body = ir::Store::Make(out, {tx * 4}, ir::Broadcast::Make(ir::Expr(1.0f), 4));
  auto src = CudaOf(OneThreadLoop(tx, out, body));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(src.status().message()),
              HasSubstr("vector store to Out of 4 lanes needs one flat index of as many lanes"));
}

TEST(CodeGenCudaError, UnknownMathFunction) {
  auto out = ir::MakeBuffer("Out", ir::Float(32), {32});
  ir::Var tx("tx");
  ir::Stmt body =
      ir::Store::Make(out, {tx}, ir::Call::Make(ir::Float(32), "frobnicate", {ir::Expr(1.0f)}));
  auto src = CudaOf(OneThreadLoop(tx, out, body));
  ASSERT_FALSE(src.ok());
  EXPECT_THAT(std::string(src.status().message()),
              HasSubstr("math function 'frobnicate' in CUDA codegen"));
}

}  // namespace
}  // namespace cinn_like::backends
