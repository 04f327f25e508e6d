/// \file GPU machine only: the shared-memory tiled matmul (cache_read/cache_write/compute_at,
/// bound copy loops, barriers) at several tile configurations, on fresh random data against a
/// float64 reference; prints the time of the 1024^3 example.
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

namespace cinn_like::examples {
namespace {

Example MatmulExample(const std::string& name, int size, MatmulSharedConfig config) {
  Example ex;
  ex.name = name;
  ex.build = [=](const ir::Target& t) { return BuildMatmulShared(t, size, config, name); };
  ex.shapes = [=](int64_t) {
    return std::vector<std::vector<int64_t>>{{size, size}, {size, size}, {size, size}};
  };
  ex.reference = [=](std::vector<std::vector<float>>& args, int64_t) {
    std::vector<double> row(size);
    for (int i = 0; i < size; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int k = 0; k < size; ++k) {
        double a = args[0][i * size + k];
        for (int j = 0; j < size; ++j) row[j] += a * args[1][k * size + j];
      }
      for (int j = 0; j < size; ++j) args[2][i * size + j] = static_cast<float>(row[j]);
    }
  };
  ex.sizes = {size};
  ex.tolerance = 1e-5;
  return ex;
}

void RunOnGpu(const Example& ex) {
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = BuildExample(ex, **compiler);
  ASSERT_TRUE(built.ok()) << built;
  for (int64_t n : ex.sizes) {
    auto report = RunExample(ex, **compiler, n, 5);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->passed) << ex.name << " " << report->ToString();
    double gflops = 2.0 * n * n * n / (report->run_ms * 1e6);
    std::printf("  %s %s (%.0f GFLOP/s)\n", ex.name.c_str(), report->ToString().c_str(), gflops);
  }
}

TEST(ScheduleGpu, SharedMatmul256SmallTiles) { RunOnGpu(MatmulExample("mm256", 256, {64, 4, 8})); }

TEST(ScheduleGpu, SharedMatmul256ContiguousThreadTiles) {
  RunOnGpu(MatmulExample("mm256c", 256, {64, 4, 8, 0, /*strided_threads=*/false}));
}

TEST(ScheduleGpu, SharedMatmul256PaddedSharedRows) {
  RunOnGpu(MatmulExample("mm256p", 256, {64, 4, 8, /*shared_row_pad=*/1}));
}

TEST(ScheduleGpu, SharedMatmul512WideKSlices) {
  RunOnGpu(MatmulExample("mm512", 512, {64, 8, 16}));
}

TEST(ScheduleGpu, SharedMatmulWithPartialTiles) {
  RunOnGpu(MatmulExample("mm300", 300, {64, 4, 8}));
}

TEST(ScheduleGpu, MatmulSharedExample1024) {
  auto ex = Find("matmul_shared");
  ASSERT_TRUE(ex.ok()) << ex.status();
  RunOnGpu(*ex);
}

}  // namespace
}  // namespace cinn_like::examples
