/// \file The tuner on the GPU (cinn_like/tune/autotune.h): each GPU knob (elementwise threads per
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

TEST(AutotuneGpu, ElementwiseBytesPerAccess) {
  CheckTuning(BiasGelu(S({512, 1024}), 1024), kGpu, "vector_bytes", "gpu_bias_gelu");
}

TEST(AutotuneGpu, PersistentRowBytesPerThread) {
  CheckTuning(HalfSoftmax(1024, 2048), kGpu, "row_bytes_per_thread", "gpu_softmax");
  CheckTuning(LayerNormProgram(S({256, 1024}), 1024, /*residual=*/true), kGpu,
              "row_bytes_per_thread", "gpu_layer_norm");
}

TEST(AutotuneGpu, ReductionsOfTheirOwn) {
  CheckTuning(ReduceRows(512, 8192, 1), kGpu, "row_threads", "gpu_row_threads");
  CheckTuning(ReduceRows(8192, 1024, 0), kGpu, "column_chunks", "gpu_column_chunks");
}

TEST(AutotuneGpu, WarpPerRowRowsPerBlock) {
  CheckTuning(ScaledRowSum(4096, 256), kGpu, "rows_per_block", "gpu_row_sum");
}

}  // namespace
}  // namespace cinn_like::testing
