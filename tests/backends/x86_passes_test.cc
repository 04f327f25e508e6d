/// \file The guard passes on x86, end to end: examples and vectorized schedules with tails
/// (partitioned loops, vector bodies with scalar tails) stay numerically right at odd sizes,
/// and the vectorized add still becomes 8-lane LLVM vectors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "backends/compiler.h"
#include "ir/lower.h"
#include "ir/printer.h"
#include "ir/schedule.h"
#include "ir/tensor.h"
#include "ir/transforms/hoist_common_index.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/backends/host_funcs.h"
#include "tests/test_util.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

class ExamplesAtOddSizes : public ::testing::TestWithParam<std::string> {};

TEST_P(ExamplesAtOddSizes, MatchTheReference) {
  auto ex = examples::Find(GetParam());
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = examples::BuildExample(*ex, **compiler);
  ASSERT_TRUE(built.ok()) << built;
  bool rows = ex->shapes(1)[0].size() > 1;  // n counts rows of 64 or 256 columns
  for (int64_t n : {1, 2, 3, 7, 9, 31, 33, 255, 1031, 8191, 8193, 100003}) {
    if (rows && n > 2000) continue;
    auto report = examples::RunExample(*ex, **compiler, n);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->passed) << ex->name << " " << report->ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Passes, ExamplesAtOddSizes,
                         ::testing::Values("myadd", "add2d_reorder", "add_vectorized", "vadd"),
                         [](const auto& info) { return info.param; });

// The runner's relative error of one random-signed sum is ill-conditioned (the sum may be near
// zero), so the partitioned reduction is checked on positive data.
TEST(X86Passes, PartitionedSumReductionAtOddSizes) {
  auto ex = examples::Find("sum_reduce");
  ASSERT_TRUE(ex.ok());
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  ASSERT_TRUE(examples::BuildExample(*ex, **compiler).ok());
  auto fn = (*compiler)->Lookup("sum_reduce");
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t n : {1, 2, 31, 32, 33, 1031, 8193}) {  // fp32 rounding ~2e-6 at 8193
    testing::HostTensor<float> a({n}), b({1});
    a.FillRandom(0.5f, 1.0f);
    b.Poison();
    DLTensor* args[] = {a.dl(), b.dl()};
    ASSERT_EQ((*fn)(args, 2, nullptr), 0) << cinn_like_get_last_error();
    double want = 0;
    for (int64_t k = 0; k < n; ++k) want += a[k];
    EXPECT_NEAR(b[0], want, 1e-5 * want) << "n=" << n;
  }
}

TEST(X86Passes, VAddIsEightLaneVectorsInParallelChunks) {
  auto ex = examples::Find("vadd");
  ASSERT_TRUE(ex.ok());
  auto func = ex->build(ir::Target::X86());
  ASSERT_TRUE(func.ok()) << func.status();
  std::string ir = ir::ToString((*func)->body);
  // The partitioned main chunk loop has no guard; only tails keep one.
  EXPECT_THAT(ir, HasSubstr("parallel for (i_outer_outer, 0, min(((((n + 7) / 8) + 1023) / 1024), "
                            "(n / 8192))) {\n"
                            "  for (i_outer_inner, 0, 1024) {\n"
                            "    C[ramp("));
  // The tail chunk: the vector body where all 8 lanes are in bounds, else scalar lanes.
  EXPECT_THAT(ir,
              HasSubstr("    if ((((((i_outer_outer * 1024) + i_outer_inner) * 8) + 7) < n)) {\n"
                        "      C[ramp("));
  EXPECT_THAT(ir, HasSubstr("    } else {\n      for (i_inner, 0, 8) {\n"));
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  auto source = (*compiler)->GetSourceCode({"vadd", ir::Target::X86(), {*func}});
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT(*source, HasSubstr("<8 x float>"));
  EXPECT_THAT(*source, HasSubstr("cinn_like_parallel_for"));
}

/// out[i] = x[i] * 3 - 1 over symbolic n with `i` split by `lanes` and the inner loop
/// vectorized: partitioned into a guard-free vector loop and a tail of vector-or-scalar code.
absl::StatusOr<ir::LoweredFunc> ScaleShift(int lanes, ir::Type dtype) {
  ir::Var n("n");
  ir::Tensor x = ir::Placeholder("X", dtype, {n});
  ir::Tensor out = ir::Compute(
      {n},
      [&](const std::vector<ir::Expr>& i) {
        return x(i[0]) * ir::MakeConst(dtype, 3) - ir::MakeConst(dtype, 1);
      },
      "Out");
  auto sch = ir::Schedule::Create({out});
  ir::Stage& s = sch[out];
  auto i = s.LeafAxis(0);
  if (!i.ok()) return i.status();
  auto v = s.Vectorize(*i, lanes);
  if (!v.ok()) return v.status();
  return ir::Lower("scale_shift", {x, out}, sch, ir::Target::X86());
}

TEST(X86Passes, VectorBodyWithScalarTailIsRightAtEverySize) {
  auto func = ScaleShift(8, ir::Float(32));
  ASSERT_TRUE(func.ok()) << func.status();
  std::string ir = ir::ToString((*func)->body);
  EXPECT_THAT(ir, HasSubstr("for (i_outer, 0, (n / 8)) {\n  Out[ramp((i_outer * 8), 1, 8)]"));
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  ASSERT_TRUE((*compiler)->Build({"scale_shift", ir::Target::X86(), {*func}}).ok());
  auto fn = (*compiler)->Lookup("scale_shift");
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t n : {1, 5, 8, 9, 15, 16, 17, 1001}) {
    testing::HostTensor<float> x({n}), out({n});
    x.FillRandom();
    out.Poison();
    DLTensor* args[] = {x.dl(), out.dl()};
    ASSERT_EQ((*fn)(args, 2, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t k = 0; k < n; ++k) {
      double want = static_cast<double>(x[k]) * 3 - 1;
      ASSERT_NEAR(out[k], want, 1e-6 * (1 + std::fabs(want))) << "n=" << n << " k=" << k;
    }
  }
}

// LetStmt through LLVM, in a serial and in a parallel loop (the let is captured by the
// parallel body's closure when outside it, defined inside it otherwise).
TEST(X86Passes, HoistedIndicesRunOnX86) {
  ir::Var n("n"), i("i"), j("j");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n, ir::Expr(4)});  // indexed flat below
  auto c = ir::MakeBuffer("C", ir::Float(32), {n, ir::Expr(4)});
  for (ir::ForKind kind : {ir::ForKind::kSerial, ir::ForKind::kParallel}) {
    ir::Expr idx = i * 4 + j;
    ir::Stmt body = ir::For::Make(
        i, 0, n, kind,
        ir::For::Make(j, 0, 4, ir::ForKind::kSerial,
                      ir::Store::Make(c, {idx}, ir::Load::Make(a, {idx}) * 2.0f - 1.0f)));
    body = ir::HoistCommonIndex(body);
    ASSERT_THAT(ir::ToString(body), HasSubstr("let idx0 = (i * 4)"));
    std::string name = kind == ir::ForKind::kSerial ? "let_serial" : "let_parallel";
    auto compiler = Compiler::Create(ir::Target::X86());
    ASSERT_TRUE(compiler.ok());
    absl::Status built = (*compiler)->Build(
        testing::MakeModule(name, {ir::Argument::Input(a), ir::Argument::Output(c)}, body));
    ASSERT_TRUE(built.ok()) << built;
    auto fn = (*compiler)->Lookup(name);
    ASSERT_TRUE(fn.ok()) << fn.status();
    int64_t rows = 37;
    testing::HostTensor<float> ta({rows, 4}), tc({rows, 4});
    ta.FillRandom();
    tc.Poison();
    DLTensor* args[] = {ta.dl(), tc.dl()};
    ASSERT_EQ((*fn)(args, 2, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t k = 0; k < rows * 4; ++k) {
      ASSERT_EQ(tc[k], ta[k] * 2.0f - 1.0f) << name << " k=" << k;
    }
  }
}

}  // namespace
}  // namespace cinn_like::backends
