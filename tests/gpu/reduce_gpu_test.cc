/// \file GPU machine only: reductions whose reduce axis is bound to threadIdx.x (block reduce
/// per row, and several rows per block on threadIdx.y), sum/max/min over float32, float64 and
/// int32, at sizes around the block width, against a float64 reference on fresh random data;
/// and the row_sum example's bandwidth at 8192x8192 (printed, never asserted).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/cuda/row_reduce_module.h"
#include "tests/gpu/device_buffer.h"
#include "tests/test_util.h"
#include "tools/examples.h"

namespace cinn_like::backends {
namespace {

using testing::DeviceBuffer;
using testing::DeviceTensor;

/// Builds `f` for the device and returns its entry.
EntryFunction BuildOnDevice(Compiler& compiler, const ir::LoweredFunc& f) {
  absl::Status built = compiler.Build({f->name, compiler.target(), {f}});
  EXPECT_TRUE(built.ok()) << built;
  auto fn = compiler.Lookup(f->name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *fn : nullptr;
}

/// Runs B = reduce_j A over (m, n) on the device on fresh random data and compares with a
/// float64 reference: exact for max/min and int32 sums; for float sums within
/// 1e-5 * sum_j |A[i, j]| (a bound for any summation order at these sizes).
template <typename T>
void CheckRowReduce(EntryFunction fn, ir::ReduceKind kind, int64_t m, int64_t n) {
  SCOPED_TRACE(absl::StrCat("m=", m, " n=", n));
  testing::HostTensor<T> a({m, n}), b({m});
  if constexpr (std::is_floating_point_v<T>) {
    a.FillRandom();
  } else {
    a.FillRandom(-1000, 1000);
  }
  b.Poison();
  DeviceBuffer da(a.size() * sizeof(T)), db(b.size() * sizeof(T));
  ASSERT_EQ(cinn_like_cuda_memcpy_to_device(da.get(), a.data().data(), a.size() * sizeof(T)), 0);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_device(db.get(), b.data().data(), b.size() * sizeof(T)), 0);
  std::vector<int64_t> sa{m, n}, sb{m};
  DLDataType dtype = testing::HostTensor<T>::DefaultDType();
  DLTensor ta = DeviceTensor(da.get(), sa, dtype), tb = DeviceTensor(db.get(), sb, dtype);
  DLTensor* args[] = {&ta, &tb};
  ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
  ASSERT_EQ(cinn_like_cuda_memcpy_to_host(b.data().data(), db.get(), b.size() * sizeof(T)), 0);
  int mismatches = 0;
  for (int64_t i = 0; i < m; ++i) {
    double ref = kind == ir::ReduceKind::kSum ? 0.0 : static_cast<double>(a[i * n]);
    double abs_sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      double v = a[i * n + j];
      abs_sum += std::fabs(v);
      if (kind == ir::ReduceKind::kSum) ref += v;
      if (kind == ir::ReduceKind::kMax) ref = std::max(ref, v);
      if (kind == ir::ReduceKind::kMin) ref = std::min(ref, v);
    }
    double tol = kind == ir::ReduceKind::kSum && std::is_floating_point_v<T> ? 1e-5 * abs_sum : 0;
    if (std::fabs(static_cast<double>(b[i]) - ref) > tol && mismatches++ < 5) {
      ADD_FAILURE() << "B[" << i << "] = " << b[i] << ", expected " << ref << " (tolerance " << tol
                    << ")";
    }
  }
  EXPECT_EQ(mismatches, 0);
}

struct Case {
  ir::ReduceKind kind;
  int threads;
  int rows_per_block;  // 0: one row per block
};

std::string KindName(ir::ReduceKind k) {
  return k == ir::ReduceKind::kSum ? "sum" : k == ir::ReduceKind::kMax ? "max" : "min";
}

class RowReduceGpu : public ::testing::TestWithParam<Case> {};

TEST_P(RowReduceGpu, MatchesFloat64ReferenceAtEverySize) {
  const Case& c = GetParam();
  auto compiler = Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto f = testing::RowReduce("row_" + KindName(c.kind), c.kind, c.threads, c.rows_per_block);
  ASSERT_TRUE(f.ok()) << f.status();
  EntryFunction fn = BuildOnDevice(**compiler, *f);
  ASSERT_NE(fn, nullptr);
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{
           {7, 1000}, {64, 8192}, {3, 33}, {1, 1}, {5, 31}, {9, 1025}, {130, 257}}) {
    CheckRowReduce<float>(fn, c.kind, m, n);
  }
}

INSTANTIATE_TEST_SUITE_P(
    KindsAndWidths, RowReduceGpu,
    ::testing::Values(Case{ir::ReduceKind::kSum, 32, 0}, Case{ir::ReduceKind::kSum, 256, 0},
                      Case{ir::ReduceKind::kSum, 1024, 0}, Case{ir::ReduceKind::kMax, 256, 0},
                      Case{ir::ReduceKind::kMin, 1024, 0}, Case{ir::ReduceKind::kMax, 32, 0},
                      Case{ir::ReduceKind::kSum, 8, 0}, Case{ir::ReduceKind::kSum, 96, 0},
                      Case{ir::ReduceKind::kMin, 24, 0}, Case{ir::ReduceKind::kSum, 100, 0},
                      Case{ir::ReduceKind::kSum, 32, 4}, Case{ir::ReduceKind::kMax, 32, 8},
                      Case{ir::ReduceKind::kSum, 16, 8}, Case{ir::ReduceKind::kMin, 64, 4}),
    [](const auto& info) {
      const Case& c = info.param;
      return absl::StrCat(KindName(c.kind), "_x", c.threads, "_y",
                          c.rows_per_block ? c.rows_per_block : 1);
    });

TEST(RowReduceGpuTypes, Float64SumAndInt32MaxAndSum) {
  auto compiler = Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto f64 = testing::RowReduce("row_sum_f64", ir::ReduceKind::kSum, 256, 0, ir::Float(64));
  auto i32max = testing::RowReduce("row_max_i32", ir::ReduceKind::kMax, 128, 0, ir::Int(32));
  auto i32sum = testing::RowReduce("row_sum_i32", ir::ReduceKind::kSum, 48, 0, ir::Int(32));
  ASSERT_TRUE(f64.ok() && i32max.ok() && i32sum.ok());
  EntryFunction fn = BuildOnDevice(**compiler, *f64);
  ASSERT_NE(fn, nullptr);
  CheckRowReduce<double>(fn, ir::ReduceKind::kSum, 7, 1000);
  CheckRowReduce<double>(fn, ir::ReduceKind::kSum, 64, 8192);
  fn = BuildOnDevice(**compiler, *i32max);
  ASSERT_NE(fn, nullptr);
  CheckRowReduce<int32_t>(fn, ir::ReduceKind::kMax, 3, 33);
  CheckRowReduce<int32_t>(fn, ir::ReduceKind::kMax, 64, 8192);
  fn = BuildOnDevice(**compiler, *i32sum);
  ASSERT_NE(fn, nullptr);
  CheckRowReduce<int32_t>(fn, ir::ReduceKind::kSum, 7, 1000);
}

TEST(RowSumGpu, ExampleBandwidthAt8192Squared) {
  auto ex = examples::Find("row_sum");
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto compiler = Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto f = ex->build((*compiler)->target());
  ASSERT_TRUE(f.ok()) << f.status();
  EntryFunction fn = BuildOnDevice(**compiler, *f);
  ASSERT_NE(fn, nullptr);
  const int64_t m = 8192, n = 8192;
  CheckRowReduce<float>(fn, ir::ReduceKind::kSum, m, n);
  DeviceBuffer da(m * n * sizeof(float)), db(m * sizeof(float));
  std::vector<int64_t> sa{m, n}, sb{m};
  DLTensor ta = DeviceTensor(da.get(), sa, {kDLFloat, 32, 1});
  DLTensor tb = DeviceTensor(db.get(), sb, {kDLFloat, 32, 1});
  DLTensor* args[] = {&ta, &tb};
  for (int w = 0; w < 3; ++w) ASSERT_EQ(fn(args, 2, nullptr), 0);
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0);
  const int runs = 50;
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < runs; ++r) fn(args, 2, nullptr);
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
  std::printf("row_sum 8192x8192 float32: %.1f us, %.0f GB/s read\n", s * 1e6,
              m * n * sizeof(float) / s / 1e9);
}

}  // namespace
}  // namespace cinn_like::backends
