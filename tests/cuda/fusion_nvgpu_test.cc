/// \file Fused groups for NVGPU (sm_90 forced, no GPU needed): the CUDA source of every graph
/// the GPU fusion tests run (odd rows and columns, rows longer than a block, symbolic batch and
/// symbolic columns) compiles to PTX with NVRTC as one kernel, and the schedules by pattern
/// are what the source shows (block reduces for rows, a serial loop per thread for columns).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlir/row_buckets.h"
#include "ir/flags.h"
#include "tests/cuda/fused_source.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(FusionNVGPU, RowGroupsAtEveryShapeCompileToPtxAsOneKernel) {
  for (int64_t cols : {1, 7, 33, 256, 1000, 4099}) {
    for (const Shape& s :
         {S({1, cols}), S({37, cols}), S({64, cols}), S({6, cols}),
          Shape{Sym("n"), Dim::Known(cols)}, Shape{Dim::Known(2), Sym("n"), Dim::Known(cols)}}) {
      SCOPED_TRACE(hlir::ShapeToString(s));
      EXPECT_EQ(CountKernels(CompiledSource(SoftmaxProgram(s))), 1);
      EXPECT_EQ(CountKernels(CompiledSource(LayerNormProgram(s, cols, false))), 1);
      EXPECT_EQ(CountKernels(CompiledSource(LayerNormProgram(s, cols, true))), 1);
      EXPECT_EQ(CountKernels(CompiledSource(BiasGelu(s, cols))), 1);
    }
  }
}

TEST(FusionNVGPU, VectorSoftmaxAndLayerNormAreOneKernel) {
  // Their reductions are scalars: the whole vector is one row (one block; per thread when
  // short). This was refused ("no GPU binding"), so torch fell back on 1-D softmax.
  for (int64_t n : {1, 5, 300, 5000}) {
    SCOPED_TRACE("n " + std::to_string(n));
    EXPECT_EQ(CountKernels(CompiledSource(SoftmaxProgram(S({n})))), 1);
    EXPECT_EQ(CountKernels(CompiledSource(LayerNormProgram(S({n}), n, false))), 1);
  }
  EXPECT_THAT(CompiledSource(SoftmaxProgram(S({5000}))), HasSubstr("cinn_like_block_reduce_max"));
}

TEST(FusionNVGPU, AnExternReadsItsInputsStoredEvenCompileTimeConstants) {
  // A constant weight or a transpose before a cuDNN conv or cuBLAS matmul is stored, not
  // inlined: the library call reads whole buffers. The constant was inlined and the graph
  // refused, so PyTorch's avg_pool backward and conv3d fell back on CUDA.
  EXPECT_GE(CountKernels(CompiledSource(ExternsOfConstantAndTransposedInputs())), 2);
}

TEST(FusionNVGPU, SymbolicColumnsStayOneBlockPerRow) {
  // One kernel, and one more per bucket of row lengths (hlir/row_buckets.h).
  std::string src = CompiledSource(SoftmaxProgram(Shape{Dim::Known(6), Sym("m")}));
  EXPECT_EQ(CountKernels(src), 1 + std::size(hlir::kRowBuckets));
  EXPECT_THAT(src, HasSubstr("cinn_like_block_reduce_sum"));
}

TEST(FusionNVGPU, ColumnReductionGroupIsOneCoalescedKernelWithoutBlockReduce) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({300, 70}), "x");
  b.MarkOutput(b.Sqrt(b.Abs(b.ReduceSum(x, {0}))));
  std::string src = CompiledSource(*b.Build());
  EXPECT_EQ(CountKernels(src), 1);
  EXPECT_THAT(src, Not(HasSubstr("cinn_like_block_reduce_sum")));
  EXPECT_THAT(src, HasSubstr("threadIdx.x"));
}

TEST(FusionNVGPU, RootColumnReductionIsAThreadPerColumn) {
  // 300 rows split into 4 chunks of 75 (two kernels, tests/cuda/group_schedule_nvgpu_test.cc);
  // 30 rows do not split into chunks of 32 or more: one kernel. Never a block reduce.
  for (int64_t rows : {300, 30}) {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({rows, 70}), "x");
    b.MarkOutput(b.ReduceSum(x, {0}));
    std::string src = CompiledSource(*b.Build());
    EXPECT_EQ(CountKernels(src), rows == 300 ? 2 : 1);
    EXPECT_THAT(src, Not(HasSubstr("cinn_like_block_reduce_sum")));
  }
}

TEST(FusionNVGPU, ConvBatchNormReluAndMlpCompileToPtx) {
  const bool saved = FLAGS_cinn_like_extern_libs;
  FLAGS_cinn_like_extern_libs = false;
  EXPECT_EQ(CountKernels(CompiledSource(ConvBnRelu(1, 3, 224, 16))), 2);
  EXPECT_EQ(CountKernels(CompiledSource(Mlp(9, 32, 64, 16))), 3);
  FLAGS_cinn_like_extern_libs = saved;
}

/// x [m, k] times y [k, n] (or linear x [m, k], w [n, k]) with generated kernels.
Program MatmulProgram(const Shape& x, const Shape& y, bool linear) {
  NetBuilder b;
  auto a = b.CreateInput(DType::kFloat32, x, "x");
  auto w = b.CreateInput(DType::kFloat32, y, "w");
  b.MarkOutput(linear ? b.Linear(a, w) : b.Matmul(a, w));
  return *b.Build();
}

TEST(FusionNVGPU, StaticTileMultipleMatmulsUseSharedMemoryTilesOthersTheSimpleSchedule) {
  const bool saved = FLAGS_cinn_like_extern_libs;
  FLAGS_cinn_like_extern_libs = false;
  std::string tiled = CompiledSource(MatmulProgram(S({128, 64}), S({64, 192}), false));
  EXPECT_THAT(tiled, HasSubstr("__shared__ float x_shared"));
  EXPECT_THAT(tiled, HasSubstr("__shared__ float w_shared"));
  EXPECT_THAT(tiled, HasSubstr("threadIdx.y"));
  std::string linear = CompiledSource(MatmulProgram(S({64, 32}), S({128, 32}), true));
  EXPECT_THAT(linear, HasSubstr("__shared__ float w_shared"));
  std::string odd = CompiledSource(MatmulProgram(S({100, 64}), S({64, 192}), false));
  EXPECT_EQ(CountKernels(odd), 1);
  EXPECT_THAT(odd, Not(HasSubstr("__shared__")));
  FLAGS_cinn_like_extern_libs = saved;
}

}  // namespace
}  // namespace cinn_like::testing
