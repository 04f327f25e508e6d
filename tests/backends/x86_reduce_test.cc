/// \file x86 reductions over a vectorized reduce loop: vector partials, the split tail peeled
/// off, a horizontal llvm.vector.reduce at the end, rows on the thread pool; the emitted IR and
/// the results against a float64 reference on fresh random data (sum, max, min).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
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
using ::testing::Not;

/// B[i] = reduce_j A[i, j] over symbolic (m, n), or n fixed when `cols` > 0: i parallel, j
/// split by `lanes` with the inner part vectorized.
absl::StatusOr<ir::LoweredFunc> RowReduceX86(const std::string& name, ir::ReduceKind kind,
                                             int lanes, ir::Type dtype = ir::Float(32),
                                             int cols = 0) {
  ir::Var m("m");
  ir::Expr n = cols > 0 ? ir::Expr(cols) : ir::Expr(ir::Var("n"));
  ir::Tensor a = ir::Placeholder("A", dtype, {m, n});
  ir::IterVar j = ir::ReduceAxis(n, "j");
  ir::Tensor b = ir::Compute(
      {m},
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr v = a(i[0], j.var);
        if (kind == ir::ReduceKind::kMax) return ir::ReduceMax(v, {j});
        if (kind == ir::ReduceKind::kMin) return ir::ReduceMin(v, {j});
        if (kind == ir::ReduceKind::kProd) return ir::ReduceProd(v, {j});
        return ir::ReduceSum(v, {j});
      },
      "B");
  auto sch = ir::Schedule::Create({b});
  ir::Stage& s = sch[b];
  auto i = s.LeafAxis(0);
  if (!i.ok()) return i.status();
  absl::Status st = s.Parallel(*i);
  if (!st.ok()) return st;
  auto inner = s.Vectorize(j.var, lanes);
  if (!inner.ok()) return inner.status();
  return ir::Lower(name, {a, b}, sch, ir::Target::X86());
}

struct Built {
  std::unique_ptr<Compiler> compiler;
  EntryFunction fn = nullptr;
  std::string llvm_ir;
};

Built Build(const ir::LoweredFunc& f) {
  Built out;
  auto c = Compiler::Create(ir::Target::X86());
  EXPECT_TRUE(c.ok()) << c.status();
  out.compiler = std::move(*c);
  ir::Module m{f->name, ir::Target::X86(), {f}};
  auto src = out.compiler->GetSourceCode(m);
  EXPECT_TRUE(src.ok()) << src.status();
  if (src.ok()) out.llvm_ir = *src;
  absl::Status s = out.compiler->Build(m);
  EXPECT_TRUE(s.ok()) << s;
  auto fn = out.compiler->Lookup(f->name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (fn.ok()) out.fn = *fn;
  return out;
}

/// Runs the function on fresh random data; max/min and integer sums must be exact, float
/// sums within 1e-5 * sum_j |A[i, j]|.
template <typename T>
void Check(EntryFunction fn, ir::ReduceKind kind, int64_t m, int64_t n) {
  SCOPED_TRACE(absl::StrCat("m=", m, " n=", n));
  testing::HostTensor<T> a({m, n}), b({m});
  if constexpr (std::is_floating_point_v<T>) {
    a.FillRandom();
  } else {
    a.FillRandom(-1000, 1000);
  }
  b.Poison();
  DLTensor* args[] = {a.dl(), b.dl()};
  ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
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
      ADD_FAILURE() << "B[" << i << "] = " << b[i] << ", expected " << ref;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

const std::vector<std::pair<int64_t, int64_t>> kSizes = {
    {1, 1}, {3, 7}, {5, 8}, {2, 17}, {13, 33}, {7, 1000}, {64, 8192}, {100, 129}};

TEST(X86Reduce, LoweredIrHasVectorPartialsAPeeledTailAndOneHorizontalReduce) {
  auto f = RowReduceX86("rs", ir::ReduceKind::kSum, 8);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string ir = ir::ToString(**f);
  EXPECT_THAT(ir, HasSubstr("parallel for (i, 0, m)")) << ir;
  EXPECT_THAT(ir, HasSubstr("B_vacc[ramp(0, 1, 8)] = broadcast(0.0f, 8)")) << ir;
  // The row in blocks of 4096 vectors (BlockReductions: a lane adds at most 4096 elements at a
  // time), each block's partials added to B_vacc.
  EXPECT_THAT(ir, HasSubstr("for (j_outer_block, 0, ((n / 8) / 4096))")) << ir;
  EXPECT_THAT(ir, HasSubstr("B_vacc_block[ramp(0, 1, 8)] = (B_vacc_block[ramp(0, 1, 8)] + A[ramp("))
      << ir;
  EXPECT_THAT(ir, HasSubstr("B_vacc[ramp(0, 1, 8)] = (B_vacc[ramp(0, 1, 8)] + "
                            "B_vacc_block[ramp(0, 1, 8)])"))
      << ir;
  // The rest of the row after its last block, the peeled tail's too, summed into partials of
  // their own (B_vacc_tail), each added to B_vacc once.
  EXPECT_THAT(ir, HasSubstr("B_vacc[ramp(0, 1, 8)] = (B_vacc[ramp(0, 1, 8)] + "
                            "B_vacc_tail[ramp(0, 1, 8)])"))
      << ir;
  EXPECT_THAT(ir, HasSubstr("B_vacc_tail[j_inner_tail] = (B_vacc_tail[j_inner_tail] + A[")) << ir;
  EXPECT_THAT(ir, HasSubstr("B_vacc[j_inner_tail_tsum] = (B_vacc[j_inner_tail_tsum] + "
                            "B_vacc_tail[j_inner_tail_tsum])"))
      << ir;
  EXPECT_THAT(ir, HasSubstr("B[i] = (B[i] + vector_reduce_sum(B_vacc[ramp(0, 1, 8)]))")) << ir;
}

TEST(X86Reduce, LlvmIrHasEightLaneVectorsAVectorReduceAndTheThreadPool) {
  auto f = RowReduceX86("rs", ir::ReduceKind::kSum, 8);
  ASSERT_TRUE(f.ok()) << f.status();
  Built built = Build(*f);
  EXPECT_THAT(built.llvm_ir, HasSubstr("<8 x float>"));
  EXPECT_THAT(built.llvm_ir, HasSubstr("call reassoc float @llvm.vector.reduce.fadd.v8f32("));
  EXPECT_THAT(built.llvm_ir, HasSubstr("@cinn_like_parallel_for("));
  auto fmax = RowReduceX86("rmax", ir::ReduceKind::kMax, 8);
  auto imin = RowReduceX86("rmin", ir::ReduceKind::kMin, 4, ir::Int(32));
  ASSERT_TRUE(fmax.ok() && imin.ok());
  // A float max keeps a NaN (ir/math.h maximum): each lane's and the lanes' combine.
  EXPECT_THAT(Build(*fmax).llvm_ir, HasSubstr("@llvm.maximum.v8f32("));
  EXPECT_THAT(Build(*fmax).llvm_ir, HasSubstr("@llvm.vector.reduce.fmaximum.v8f32("));
  EXPECT_THAT(Build(*imin).llvm_ir, HasSubstr("@llvm.vector.reduce.smin.v4i32("));
}

TEST(X86Reduce, ProductPartialsStartAtOneAndEndInAVectorReduceMul) {
  auto f = RowReduceX86("rp", ir::ReduceKind::kProd, 8);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string ir = ir::ToString(**f);
  EXPECT_THAT(ir, HasSubstr("B_vacc[ramp(0, 1, 8)] = broadcast(1.0f, 8)")) << ir;
  EXPECT_THAT(ir, HasSubstr("B_vacc[ramp(0, 1, 8)] = (B_vacc[ramp(0, 1, 8)] * A[ramp(")) << ir;
  EXPECT_THAT(ir, HasSubstr("B[i] = (B[i] * vector_reduce_prod(B_vacc[ramp(0, 1, 8)]))")) << ir;
  EXPECT_THAT(Build(*f).llvm_ir,
              HasSubstr("call reassoc float @llvm.vector.reduce.fmul.v8f32(float 1.000000e+00, "));
  auto iprod = RowReduceX86("rpi", ir::ReduceKind::kProd, 4, ir::Int(32));
  ASSERT_TRUE(iprod.ok()) << iprod.status();
  EXPECT_THAT(Build(*iprod).llvm_ir, HasSubstr("@llvm.vector.reduce.mul.v4i32("));
}

TEST(X86Reduce, ExactSplitNeedsNoTail) {
  auto f = RowReduceX86("rs64", ir::ReduceKind::kSum, 8, ir::Float(32), 64);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string ir = ir::ToString(**f);
  EXPECT_THAT(ir, Not(HasSubstr("_tail"))) << ir;
  EXPECT_THAT(ir, Not(HasSubstr("if ("))) << ir;
  Built built = Build(*f);
  ASSERT_NE(built.fn, nullptr);
  for (int64_t m : {1, 3, 50}) Check<float>(built.fn, ir::ReduceKind::kSum, m, 64);
}

class X86ReduceKinds : public ::testing::TestWithParam<ir::ReduceKind> {};

TEST_P(X86ReduceKinds, Float32MatchesFloat64ReferenceAtEverySize) {
  auto f = RowReduceX86("r", GetParam(), 8);
  ASSERT_TRUE(f.ok()) << f.status();
  Built built = Build(*f);
  ASSERT_NE(built.fn, nullptr);
  for (auto [m, n] : kSizes) Check<float>(built.fn, GetParam(), m, n);
}

TEST_P(X86ReduceKinds, Float64AndInt32MatchAtEverySize) {
  auto f64 = RowReduceX86("r64", GetParam(), 4, ir::Float(64));
  auto i32 = RowReduceX86("ri32", GetParam(), 16, ir::Int(32));
  ASSERT_TRUE(f64.ok() && i32.ok());
  Built b64 = Build(*f64), bi32 = Build(*i32);
  ASSERT_NE(b64.fn, nullptr);
  ASSERT_NE(bi32.fn, nullptr);
  for (auto [m, n] : kSizes) {
    Check<double>(b64.fn, GetParam(), m, n);
    Check<int32_t>(bi32.fn, GetParam(), m, n);
  }
}

// A row sum computed at its consumer's row loop (its buffer allocated inside that loop, one
// element per row) with the reduce loop vectorized: the reduction's region stops at the
// buffer's Allocate, so each row's horizontal reduce and final store stay inside the row loop
// (the region used to climb past the Allocate into the row loop on x86).
TEST(X86Reduce, VectorizedReductionComputedAtItsConsumersRow) {
  ir::Var m("m");
  const int64_t n = 100;  // 12 vectors of 8 and a tail of 4
  ir::Tensor a = ir::Placeholder("A", ir::Float(32), {m, ir::Expr(static_cast<int>(n))});
  ir::IterVar j = ir::ReduceAxis(ir::Expr(static_cast<int>(n)), "j");
  ir::Tensor r = ir::Compute(
      {m}, [&](const std::vector<ir::Expr>& i) { return ir::ReduceSum(a(i[0], j.var), {j}); }, "R");
  ir::Tensor d = ir::Compute(
      {m}, [&](const std::vector<ir::Expr>& i) { return r(i[0]) * 2.0f + 1.0f; }, "D");
  auto sch = ir::Schedule::Create({d});
  auto row = sch[d].LeafAxis(0);
  ASSERT_TRUE(row.ok()) << row.status();
  absl::Status at = sch[r].ComputeAt(sch[d], *row);
  ASSERT_TRUE(at.ok()) << at;
  // compute_at renames the stage's axes: the reduce axis is its last leaf now.
  auto j_at = sch[r].LeafAxis(static_cast<int>(sch[r].leaves().size()) - 1);
  ASSERT_TRUE(j_at.ok()) << j_at.status();
  auto lanes = sch[r].Vectorize(*j_at, 8);
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  auto f = ir::Lower("sum_at_row", {a, d}, sch, ir::Target::X86());
  ASSERT_TRUE(f.ok()) << f.status();
  // The horizontal reduce sits inside the row loop, after the vector partials.
  std::string body = ir::ToString((*f)->body);
  size_t row_loop = body.find("for (");
  size_t reduce = body.find("vector_reduce_sum");
  ASSERT_NE(reduce, std::string::npos) << body;
  EXPECT_LT(row_loop, reduce) << body;
  Built built = Build(*f);
  ASSERT_NE(built.fn, nullptr);
  for (int64_t rows : {1, 5, 33}) {
    SCOPED_TRACE(absl::StrCat("m=", rows));
    testing::HostTensor<float> in({rows, n}), out({rows});
    in.FillRandom();
    out.Poison();
    DLTensor* args[] = {in.dl(), out.dl()};
    ASSERT_EQ(built.fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t i = 0; i < rows; ++i) {
      double sum = 0, mag = 0;
      for (int64_t k = 0; k < n; ++k) {
        sum += in.data()[i * n + k];
        mag += std::fabs(in.data()[i * n + k]);
      }
      EXPECT_NEAR(out.data()[i], sum * 2.0 + 1.0, 1e-5 * (2 * mag + 1)) << "row " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SumMaxMin, X86ReduceKinds,
                         ::testing::Values(ir::ReduceKind::kSum, ir::ReduceKind::kMax,
                                           ir::ReduceKind::kMin),
                         [](const auto& info) {
                           return info.param == ir::ReduceKind::kSum   ? "sum"
                                  : info.param == ir::ReduceKind::kMax ? "max"
                                                                       : "min";
                         });

}  // namespace
}  // namespace cinn_like::backends
