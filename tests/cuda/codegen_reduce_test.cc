/// \file Cross-thread reductions without a GPU: what LowerThreadReduce makes of a reduce axis
/// bound to threadIdx.x, the CUDA C it prints (warp shuffles, shared memory, barriers, one
/// guarded store), its NVRTC compilation for sm_90, and the errors of unsupported bindings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ir/printer.h"
#include "ir/transforms/lower_thread_reduce.h"
#include "tests/cuda/index_names.h"
#include "tests/cuda/row_reduce_module.h"
#include "tests/cuda/vector_add_module.h"
#include "tools/examples.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string CudaSource(const ir::LoweredFunc& f) {
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode({f->name, ir::Target::NVGPU(90), {f}});
  EXPECT_TRUE(src.ok()) << src.status();
  return src.ok() ? *src : std::string();
}

std::string Ptx(const std::string& source, const std::string& name) {
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(source, 90, /*to_cubin=*/false, name);
  EXPECT_TRUE(ptx.ok()) << ptx.status() << "\n" << source;
  return ptx.ok() ? *ptx : std::string();
}

TEST(LowerThreadReduce, PartialPerThreadThenOneBlockReduceAndOneStore) {
  auto f = testing::RowReduce("rs", ir::ReduceKind::kSum, 256);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string ir = ir::ToString(**f);
  // The accumulation goes to a private partial, never to B, inside the thread loop.
  std::string row = testing::IrIndexName(ir, "(i * n)");
  EXPECT_THAT(ir, HasSubstr("B_partial[0] = (B_partial[0] + A[(" + row +
                            " + ((j_outer * 256) + j_inner))])"))
      << ir;
  EXPECT_THAT(ir, HasSubstr("B_partial[0] = block_reduce_sum(B_partial[0])")) << ir;
  EXPECT_THAT(ir, HasSubstr("if ((j_inner == 0))")) << ir;
  EXPECT_THAT(ir, HasSubstr("B[i] = (B[i] + B_partial[0])")) << ir;
  EXPECT_THAT(ir, Not(HasSubstr("B[i] = (B[i] + A"))) << ir;
}

TEST(CodeGenReduce, BlockReduceOf256ThreadsUsesShufflesSharedMemoryAndBarriers) {
  auto f = testing::RowReduce("rs", ir::ReduceKind::kSum, 256);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string src = CudaSource(*f);
  EXPECT_THAT(src, HasSubstr("__launch_bounds__(256)"));
  EXPECT_THAT(src, HasSubstr("__shfl_xor_sync(0xffffffffu, v, offset)"));
  EXPECT_THAT(src, HasSubstr("__shfl_down_sync("));
  EXPECT_THAT(src, HasSubstr("__shared__ T warp_partials[32];"));
  EXPECT_THAT(src, HasSubstr("__syncthreads();"));
  EXPECT_THAT(src, HasSubstr("int32_t j_inner = threadIdx.x;"));
  EXPECT_THAT(src, HasSubstr("float B_partial[1];"));
  // The row's threads, fixed by the launch, as the helper's template argument.
  EXPECT_THAT(src,
              ::testing::ContainsRegex(
                  R"(B_partial\[0\] = cinn_like_block_reduce_sum<[0-9]+>\(B_partial\[0\]\);)"));
  EXPECT_THAT(src, HasSubstr("if (j_inner == 0) {\n      B[i] = B[i] + B_partial[0];\n"));
  // The helpers are defined once, before the kernel.
  size_t def = src.find("T cinn_like_block_reduce_sum(T v)");
  ASSERT_NE(def, std::string::npos) << src;
  EXPECT_EQ(src.find("T cinn_like_block_reduce_sum(T v)", def + 1), std::string::npos);
  EXPECT_LT(def, src.find("__global__"));
  std::string ptx = Ptx(src, "rs");
  EXPECT_THAT(ptx, HasSubstr(".entry rs_kernel"));
  EXPECT_THAT(ptx, HasSubstr("shfl.sync.bfly"));
  EXPECT_THAT(ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(ptx, HasSubstr(".shared"));
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
}

TEST(CodeGenReduce, KernelsWithoutReductionsCarryNoHelpers) {
  auto ex = examples::Find("myadd");
  ASSERT_TRUE(ex.ok());
  auto f = ex->build(ir::Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(CudaSource(*f), Not(HasSubstr("cinn_like_block_reduce")));
}

struct Case {
  ir::ReduceKind kind;
  int threads;
  int rows_per_block;
  ir::Type dtype;
  const char* intrinsic;
};

class CodeGenReduceCases : public ::testing::TestWithParam<Case> {};

TEST_P(CodeGenReduceCases, CompilesToPtxForSm90) {
  const Case& c = GetParam();
  auto f = testing::RowReduce("rr", c.kind, c.threads, c.rows_per_block, c.dtype);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string src = CudaSource(*f);
  // The row's threads (the launch's x dimension) as the helper's template argument.
  EXPECT_THAT(src, HasSubstr(std::string(c.intrinsic) + "<" + std::to_string(c.threads) +
                             ">(B_partial[0])"))
      << src;
  int block = c.threads * (c.rows_per_block ? c.rows_per_block : 1);
  EXPECT_THAT(src, HasSubstr("__launch_bounds__(" + std::to_string(block) + ")"));
  if (c.rows_per_block) {
    EXPECT_THAT(src, HasSubstr("int32_t i_inner = threadIdx.y;"));
    // Thread 0 of a row stores only rows that exist.
    std::string first_row =
        testing::CudaIndexName(src, "i_outer * " + std::to_string(c.rows_per_block));
    EXPECT_THAT(src, HasSubstr("if (j_inner == 0 && " + first_row + " + i_inner < m) {")) << src;
  }
  std::string ptx = Ptx(src, "rr");
  EXPECT_THAT(ptx, HasSubstr(".entry rr_kernel"));
  // The row's threads known, only the helper's way for them is compiled: warp shuffles for a
  // power of two up to 32 or whole warps, else the shared-memory tree alone (its 1024-element
  // array nowhere else).
  const bool shuffles =
      (c.threads <= 32 && (c.threads & (c.threads - 1)) == 0) || c.threads % 32 == 0;
  EXPECT_EQ(ptx.find("shfl.sync") != std::string::npos, shuffles) << ptx;
  EXPECT_EQ(ptx.find("E6values") != std::string::npos, !shuffles) << ptx;
}

INSTANTIATE_TEST_SUITE_P(
    KindsWidthsTypes, CodeGenReduceCases,
    ::testing::Values(
        Case{ir::ReduceKind::kSum, 32, 0, ir::Float(32), "cinn_like_block_reduce_sum"},
        Case{ir::ReduceKind::kMax, 1024, 0, ir::Float(32), "cinn_like_block_reduce_max"},
        Case{ir::ReduceKind::kMin, 512, 0, ir::Float(32), "cinn_like_block_reduce_min"},
        Case{ir::ReduceKind::kSum, 128, 0, ir::Float(64), "cinn_like_block_reduce_sum"},
        Case{ir::ReduceKind::kMax, 96, 0, ir::Int(32), "cinn_like_block_reduce_max"},
        Case{ir::ReduceKind::kSum, 24, 0, ir::Float(32), "cinn_like_block_reduce_sum"},
        Case{ir::ReduceKind::kSum, 32, 4, ir::Float(32), "cinn_like_block_reduce_sum"},
        Case{ir::ReduceKind::kMin, 8, 16, ir::Float(32), "cinn_like_block_reduce_min"},
        Case{ir::ReduceKind::kProd, 256, 0, ir::Float(32), "cinn_like_block_reduce_prod"},
        Case{ir::ReduceKind::kProd, 24, 0, ir::Int(32), "cinn_like_block_reduce_prod"},
        Case{ir::ReduceKind::kProd, 16, 8, ir::Float(64), "cinn_like_block_reduce_prod"}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(CodeGenReduce, RowSumExampleIsABlockReducePerRow) {
  auto ex = examples::Find("row_sum");
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto f = ex->build(ir::Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  std::string src = CudaSource(*f);
  EXPECT_THAT(src, HasSubstr("__launch_bounds__(512)"));
  EXPECT_THAT(src, HasSubstr("int32_t i = blockIdx.x;"));
  // Coalesced: consecutive threads read consecutive elements of the row; four loads unrolled.
  EXPECT_THAT(src, HasSubstr("int32_t j_inner_inner = threadIdx.x;")) << src;
  std::string row = testing::CudaIndexName(src, "i * n");
  EXPECT_THAT(src, HasSubstr("A[" + row + " + (j_outer * 2048 + j_inner_inner)]")) << src;
  EXPECT_THAT(src, HasSubstr("A[" + row + " + (j_outer * 2048 + (j_inner_inner + 1536))]")) << src;
  EXPECT_THAT(src,
              ::testing::ContainsRegex(R"(cinn_like_block_reduce_sum<[0-9]+>\(B_partial\[0\]\))"));
  EXPECT_THAT(Ptx(src, "row_sum"), HasSubstr(".entry row_sum_kernel"));
}

TEST(LowerThreadReduceError, ReduceLoopOnThreadIdxYIsUnimplemented) {
  // The schedule refuses this binding; hand-built IR can still carry it.
  ir::Var m("m"), n("n"), bx("bx"), ty("ty");
  auto a = ir::MakeBuffer("A", ir::Float(32), {m, n});
  auto b = ir::MakeBuffer("B", ir::Float(32), {m});
  ir::Stmt update = ir::Store::Make(b, {bx}, ir::Load::Make(b, {bx}) + ir::Load::Make(a, {bx, ty}));
  ir::Stmt nest =
      ir::For::Make(bx, 0, m, ir::ForKind::kGpuBlock,
                    ir::For::Make(ty, 0, 32, ir::ForKind::kGpuThread, update, /*bind_axis=*/1), 0);
  auto lowered = ir::LowerThreadReduce(nest);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(lowered.status().message(),
            "reduction into B: its reduce loop ty is bound to threadIdx.y; a cross-thread "
            "reduction must be bound to threadIdx.x");
}

TEST(CodeGenReduceError, BlockReduceUnderAGuardedThreadLoopIsRefused) {
  // Two thread loops of one kernel with different extents: the launch takes the larger, so the
  // reduction's loop gets a guard that not every thread passes; a barrier there would hang.
  ir::Var m("m"), bx("bx"), t("t"), tx("tx");
  auto a = ir::MakeBuffer("A", ir::Float(32), {m * 32});
  auto b = ir::MakeBuffer("B", ir::Float(32), {m});
  auto c = ir::MakeBuffer("C", ir::Float(32), {ir::Expr(64)});
  ir::Stmt update =
      ir::Store::Make(b, {bx}, ir::Load::Make(b, {bx}) + ir::Load::Make(a, {bx * 32 + tx}));
  ir::Stmt body =
      ir::For::Make(bx, 0, m, ir::ForKind::kGpuBlock,
                    ir::Block::Make({ir::For::Make(t, 0, 64, ir::ForKind::kGpuThread,
                                                   ir::Store::Make(c, {t}, ir::Expr(1.0f)), 0),
                                     ir::For::Make(tx, 0, 32, ir::ForKind::kGpuThread, update, 0)}),
                    0);
  auto lowered = ir::LowerThreadReduce(body);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "g";
  f->args = {ir::Argument::Input(a), ir::Argument::Output(b), ir::Argument::Output(c)};
  f->body = *lowered;
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok());
  auto src = (*compiler)->GetSourceCode(testing::SplitGpuModule("g", {f}));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(src.status().message(),
              HasSubstr("kernel g_kernel: cinn_like_block_reduce_sum under a thread-bound loop "
                        "shorter than its launch dimension"));
}

TEST(LowerThreadReduce, UpdatesOutsideThreadLoopsAreLeftAlone) {
  auto ex = examples::Find("sum_reduce");  // serial reduce loops inside blockIdx.x
  ASSERT_TRUE(ex.ok());
  auto f = ex->build(ir::Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  std::string ir = ir::ToString(**f);
  EXPECT_THAT(ir, Not(HasSubstr("partial"))) << ir;
  std::string chunk = testing::IrIndexName(ir, "(k_outer * 32)");
  EXPECT_THAT(ir, HasSubstr("B[i] = (B[i] + A[(" + chunk + " + k_inner)])")) << ir;
}

}  // namespace
}  // namespace cinn_like::backends
