/// \file compute_at into a tensor's own buffer (Stage::ComputeAtOwnBuffer) on x86: a row's mean
/// stored from inside the nest of the row's consumer (one nest for a layer norm's statistic and
/// its output, where a region buffer could not be an output), as an output and as a temporary;
/// results against a float64 reference on fresh random data; what it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/compiler.h"
#include "ir/lower.h"
#include "ir/printer.h"
#include "ir/schedule.h"
#include "ir/tensor.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/test_util.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kCols = 37;

/// S = sum_j A[i, j] (a region buffer at the row), MEAN = S / n in its own buffer at the row,
/// Y = A - MEAN, all in Y's row loop; MEAN an argument when `mean_is_output`.
absl::StatusOr<ir::LoweredFunc> MeanAndCentered(bool mean_is_output) {
  ir::Var m("m");
  const ir::Expr n(static_cast<int>(kCols));
  ir::Tensor a = ir::Placeholder("A", ir::Float(32), {m, n});
  ir::IterVar j = ir::ReduceAxis(n, "j");
  ir::Tensor s = ir::Compute(
      {m}, [&](const std::vector<ir::Expr>& i) { return ir::ReduceSum(a(i[0], j.var), {j}); }, "S");
  ir::Tensor mean = ir::Compute(
      {m}, [&](const std::vector<ir::Expr>& i) { return s(i[0]) / static_cast<float>(kCols); },
      "MEAN");
  ir::Tensor y = ir::Compute(
      {m, n}, [&](const std::vector<ir::Expr>& i) { return a(i[0], i[1]) - mean(i[0]); }, "Y");
  auto sch = ir::Schedule::Create(mean_is_output ? std::vector<ir::Tensor>{mean, y}
                                                 : std::vector<ir::Tensor>{y});
  auto row = sch[y].LeafAxis(0);
  if (!row.ok()) return row.status();
  absl::Status st = sch[mean].ComputeAtOwnBuffer(sch[y], *row);
  if (st.ok()) st = sch[s].ComputeAt(sch[y], *row);  // read by MEAN, at the same loop
  if (!st.ok()) return st;
  std::vector<ir::Tensor> args = {a};
  if (mean_is_output) args.push_back(mean);
  args.push_back(y);
  return ir::Lower(mean_is_output ? "mean_centered" : "centered", args, sch, ir::Target::X86());
}

TEST(X86OwnBuffer, ARowStatisticIsStoredFromInsideItsConsumersRow) {
  for (bool mean_is_output : {true, false}) {
    SCOPED_TRACE(mean_is_output ? "MEAN an output" : "MEAN a temporary");
    auto f = MeanAndCentered(mean_is_output);
    ASSERT_TRUE(f.ok()) << f.status();
    // One nest: in the row loop, S's loop, MEAN's store at the row, then Y's column loop.
    const std::string body = ir::ToString((*f)->body);
    const size_t row_loop = body.find("for (i, ");
    const size_t sum_loop = body.find("for (S_j, ");
    const size_t mean_store = body.find("MEAN[i] = ");
    const size_t y_loop = body.find("for (j, ");
    ASSERT_NE(mean_store, std::string::npos) << body;
    EXPECT_LT(row_loop, sum_loop) << body;
    EXPECT_LT(sum_loop, mean_store) << body;
    EXPECT_LT(mean_store, y_loop) << body;
    EXPECT_THAT(body, HasSubstr("allocate S[float32 * 1] in local")) << body;

    auto c = Compiler::Create(ir::Target::X86());
    ASSERT_TRUE(c.ok()) << c.status();
    ir::Module module{(*f)->name, ir::Target::X86(), {*f}};
    absl::Status built = (*c)->Build(module);
    ASSERT_TRUE(built.ok()) << built;
    auto fn = (*c)->Lookup((*f)->name);
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (int64_t rows : {1, 6, 41}) {
      SCOPED_TRACE(absl::StrCat("m=", rows));
      testing::HostTensor<float> in({rows, kCols}), mean({rows}), y({rows, kCols});
      in.FillRandom();
      mean.Poison();
      y.Poison();
      std::vector<DLTensor*> call = {in.dl()};
      if (mean_is_output) call.push_back(mean.dl());
      call.push_back(y.dl());
      ASSERT_EQ((*fn)(call.data(), static_cast<int32_t>(call.size()), nullptr), 0)
          << cinn_like_get_last_error();
      for (int64_t i = 0; i < rows; ++i) {
        double sum = 0;
        for (int64_t k = 0; k < kCols; ++k) sum += in.data()[i * kCols + k];
        const double want = sum / kCols;
        if (mean_is_output) EXPECT_NEAR(mean.data()[i], want, 1e-5) << "row " << i;
        for (int64_t k = 0; k < kCols; ++k) {
          EXPECT_NEAR(y.data()[i * kCols + k], in.data()[i * kCols + k] - want, 1e-5)
              << "row " << i << " col " << k;
        }
      }
    }
  }
}

TEST(X86OwnBuffer, RefusesABufferThatIsNotGlobalAndAStorageAlign) {
  ir::Tensor a = ir::Placeholder("A", ir::Float(32), {ir::Expr(8), ir::Expr(4)});
  ir::Tensor b = ir::Compute(
      {ir::Expr(8)}, [&](const std::vector<ir::Expr>& i) { return a(i[0], 0) * 2.0f; }, "B");
  ir::Tensor c = ir::Compute(
      {ir::Expr(8), ir::Expr(4)},
      [&](const std::vector<ir::Expr>& i) { return a(i[0], i[1]) + b(i[0]); }, "C");
  auto sch = ir::Schedule::Create({c});
  auto row = sch[c].LeafAxis(0);
  ASSERT_TRUE(row.ok()) << row.status();
  auto local = sch.CacheWrite(b, "local");
  ASSERT_TRUE(local.ok()) << local.status();
  absl::Status st = sch[*local].ComputeAtOwnBuffer(sch[c], *row);
  EXPECT_THAT(st.message(), HasSubstr("the buffer is not global"));
  ASSERT_TRUE(sch[b].ComputeAtOwnBuffer(sch[c], *row).ok());
  EXPECT_THAT(sch[b].StorageAlign(0, 4, 1).message(), HasSubstr("stores to its own buffer"));
}

}  // namespace
}  // namespace cinn_like::backends
