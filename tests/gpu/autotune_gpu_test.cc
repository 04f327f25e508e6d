/// \file The tuner on the GPU (cinn_like/autotune.h): each GPU knob (elementwise threads per
/// block, a persistent row's bytes per thread, rows per block of a warp per row, threads per
/// row of a row reduction alone, chunks of a two-stage column reduction) timed once,
/// remembered, read from the cache file without timing, and right against the reference with
/// every value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/autotune_check.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {
namespace {

const ir::Target kGpu = ir::Target::NVGPU();

Program HalfSoftmax(int64_t rows, int64_t cols) {
  NetBuilder b;
  b.MarkOutput(b.Softmax(b.CreateInput(DType::kFloat16, S({rows, cols}), "x")));
  return *b.Build();
}

/// 2 * sum(x, axis=1): one read of each row, so a warp per row (not held in registers).
Program ScaledRowSum(int64_t rows, int64_t cols) {
  NetBuilder b;
  auto sum = b.ReduceSum(b.CreateInput(DType::kFloat32, S({rows, cols}), "x"), {1});
  b.MarkOutput(b.Mul(sum, b.Fill({rows}, 2.0)));
  return *b.Build();
}

TEST(AutotuneGpu, ElementwiseThreadsPerBlock) {
  CheckTuning(BiasGelu(S({512, 1024}), 1024), kGpu, "block_threads", "gpu_bias_gelu");
}

TEST(AutotuneGpu, PersistentRowBytesPerThread) {
  CheckTuning(HalfSoftmax(1024, 2048), kGpu, "row_bytes_per_thread", "gpu_softmax");
  CheckTuning(LayerNormProgram(S({256, 1024}), 1024, /*residual=*/true), kGpu,
              "row_bytes_per_thread", "gpu_layer_norm");
}

/// sum(x, axis) of a float32 [rows, cols] x alone: a kernel of its own.
Program SumAlong(int64_t rows, int64_t cols, int axis) {
  NetBuilder b;
  b.MarkOutput(b.ReduceSum(b.CreateInput(DType::kFloat32, S({rows, cols}), "x"), {axis}));
  return *b.Build();
}

TEST(AutotuneGpu, ReductionsOfTheirOwn) {
  CheckTuning(SumAlong(512, 8192, 1), kGpu, "row_threads", "gpu_row_threads");
  CheckTuning(SumAlong(8192, 1024, 0), kGpu, "column_chunks", "gpu_column_chunks");
}

TEST(AutotuneGpu, WarpPerRowRowsPerBlock) {
  CheckTuning(ScaledRowSum(4096, 256), kGpu, "rows_per_block", "gpu_row_sum");
}

}  // namespace
}  // namespace cinn_like::testing
