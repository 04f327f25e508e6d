/// \file x86 backend correctness: hand-built functions compiled, run and compared with loops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/backends/host_funcs.h"
#include "tests/test_util.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using testing::HostTensor;

std::unique_ptr<Compiler> X86Compiler() {
  auto c = Compiler::Create(ir::Target::X86());
  EXPECT_TRUE(c.ok()) << c.status();
  return std::move(*c);
}

EntryFunction BuildAndLookup(Compiler* compiler, const ir::Module& m, const std::string& name) {
  absl::Status s = compiler->Build(m);
  EXPECT_TRUE(s.ok()) << s;
  auto fn = compiler->Lookup(name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *fn : nullptr;
}

void CheckVectorAdd(EntryFunction fn, int64_t n) {
  HostTensor<float> a({n}), b({n}), c({n});
  a.FillRandom();
  b.FillRandom();
  c.Poison();
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  ASSERT_EQ(fn(args, 3, nullptr), 0) << cinn_like_get_last_error();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(c[i], a[i] + b[i]) << "n=" << n << " i=" << i;
  }
}

TEST(X86Correctness, VectorAddSymbolicN) {
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), testing::VectorAdd("myadd"), "myadd");
  ASSERT_NE(fn, nullptr);
  for (int64_t n : {1, 63, 64, 65, 1000, 1 << 20}) CheckVectorAdd(fn, n);
  EXPECT_GT(compiler->last_build_times().total_ms, 0);
  EXPECT_THAT(compiler->last_build_times().ToString(), HasSubstr("orc_link_ms"));
}

TEST(X86Correctness, TwoModulesInOneCompiler) {
  auto compiler = X86Compiler();
  ASSERT_TRUE(compiler->Build(testing::VectorAdd("add_one")).ok());
  ASSERT_TRUE(compiler->Build(testing::VectorAdd("add_two", ir::ForKind::kUnrolled)).ok());
  for (const char* name : {"add_one", "add_two"}) {
    auto fn = compiler->Lookup(name);
    ASSERT_TRUE(fn.ok()) << fn.status();
    CheckVectorAdd(*fn, 77);
  }
}

TEST(X86Correctness, EmptyTensorRunsNoIteration) {
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), testing::VectorAdd("myadd"), "myadd");
  HostTensor<float> a({0}), b({0}), c({0});
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn(args, 3, nullptr), 0) << cinn_like_get_last_error();
}

// C[i, j] = A[i, j] * 2 + B[i, j] over a {4, m} shape, flattened by hand.
TEST(X86Correctness, TwoDimsConstantAndSymbolic) {
  ir::Var m("m");
  auto a = ir::MakeBuffer("A", ir::Float(32), {4, m});
  auto b = ir::MakeBuffer("B", ir::Float(32), {4, m});
  auto c = ir::MakeBuffer("C", ir::Float(32), {4, m});
  ir::Var i("i"), j("j");
  ir::Expr idx = i * m + j;
  ir::Stmt body = ir::For::Make(
      i, 0, 4, ir::ForKind::kSerial,
      ir::For::Make(
          j, 0, m, ir::ForKind::kSerial,
          ir::Store::Make(c, {idx},
                          ir::Load::Make(a, {idx}) * ir::Expr(2.0f) + ir::Load::Make(b, {idx}))));
  auto module = testing::MakeModule(
      "scale_add", {ir::Argument::Input(a), ir::Argument::Input(b), ir::Argument::Output(c)}, body);
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), module, "scale_add");
  ASSERT_NE(fn, nullptr);
  for (int64_t cols : {1, 17, 256}) {
    HostTensor<float> ta({4, cols}), tb({4, cols}), tc({4, cols});
    ta.FillRandom();
    tb.FillRandom();
    tc.Poison();
    DLTensor* args[] = {ta.dl(), tb.dl(), tc.dl()};
    ASSERT_EQ(fn(args, 3, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t k = 0; k < ta.size(); ++k) ASSERT_EQ(tc[k], ta[k] * 2.0f + tb[k]) << k;
  }
  // The constant dim is checked.
  HostTensor<float> ta({3, 8}), tb({3, 8}), tc({3, 8});
  DLTensor* args[] = {ta.dl(), tb.dl(), tc.dl()};
  EXPECT_NE(fn(args, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("tensor A has size 3 at dim 0, expected 4"));
}

// for i in [0, n/8): C[ramp(i*8, 1, 8)] = A[ramp] + B[ramp]; R[ramp] = A[ramp(i*8+7, -1, 8)].
ir::Module VectorizedModule() {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto b = ir::MakeBuffer("B", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  auto r = ir::MakeBuffer("R", ir::Float(32), {n});
  ir::Var i("i");
  ir::Expr dense = ir::Ramp::Make(i * 8, 1, 8);
  ir::Expr reversed = ir::Ramp::Make(i * 8 + 7, -1, 8);
  ir::Stmt body = ir::For::Make(
      i, 0, n / 8, ir::ForKind::kSerial,
      ir::Block::Make(
          {ir::Store::Make(c, {dense}, ir::Load::Make(a, {dense}) + ir::Load::Make(b, {dense})),
           ir::Store::Make(r, {dense}, ir::Load::Make(a, {reversed}))}));
  return testing::MakeModule("vadd8",
                             {ir::Argument::Input(a), ir::Argument::Input(b),
                              ir::Argument::Output(c), ir::Argument::Output(r)},
                             body);
}

TEST(X86Correctness, VectorLoadsAndStores) {
  auto compiler = X86Compiler();
  auto module = VectorizedModule();
  EntryFunction fn = BuildAndLookup(compiler.get(), module, "vadd8");
  ASSERT_NE(fn, nullptr);
  for (int64_t n : {8, 64, 1024}) {
    HostTensor<float> a({n}), b({n}), c({n}), r({n});
    a.FillRandom();
    b.FillRandom();
    c.Poison();
    r.Poison();
    DLTensor* args[] = {a.dl(), b.dl(), c.dl(), r.dl()};
    ASSERT_EQ(fn(args, 4, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t k = 0; k < n; ++k) {
      ASSERT_EQ(c[k], a[k] + b[k]) << k;
      ASSERT_EQ(r[k], a[(k / 8) * 8 + 7 - k % 8]) << k;
    }
  }
}

// A parallel loop over rows, a serial loop over m columns inside: the outlined body captures
// m and the buffers.
TEST(X86Correctness, ParallelLoop) {
  ir::Var n("n"), m("m");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n, m});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n, m});
  ir::Var i("i"), j("j");
  ir::Expr idx = i * m + j;
  ir::Expr x = ir::Load::Make(a, {idx});
  ir::Stmt body = ir::For::Make(
      i, 0, n, ir::ForKind::kParallel,
      ir::For::Make(j, 0, m, ir::ForKind::kSerial,
                    ir::Store::Make(c, {idx}, x * x + ir::Cast::Make(ir::Float(32), i))));
  auto module =
      testing::MakeModule("par_square", {ir::Argument::Input(a), ir::Argument::Output(c)}, body);
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), module, "par_square");
  ASSERT_NE(fn, nullptr);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 5}, {3, 7}, {257, 33}, {1000, 100}}) {
    HostTensor<float> ta({rows, cols}), tc({rows, cols});
    ta.FillRandom();
    tc.Poison();
    DLTensor* args[] = {ta.dl(), tc.dl()};
    ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t k = 0; k < ta.size(); ++k) {
      ASSERT_EQ(tc[k], ta[k] * ta[k] + static_cast<float>(k / cols)) << rows << "x" << cols;
    }
  }
  auto ir_text = compiler->GetSourceCode(module);
  ASSERT_TRUE(ir_text.ok()) << ir_text.status();
  EXPECT_THAT(*ir_text, HasSubstr("cinn_like_parallel_for"));
}

// Integer semantics: C truncating division and remainder, min/max/select, casts.
TEST(X86Correctness, IntegerArithmeticAndCasts) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Int(32), {n});
  auto b = ir::MakeBuffer("B", ir::Int(32), {n});
  auto q = ir::MakeBuffer("Q", ir::Int(32), {n});
  auto r = ir::MakeBuffer("R", ir::Int(32), {n});
  auto s = ir::MakeBuffer("S", ir::Int(32), {n});
  auto f = ir::MakeBuffer("F", ir::Float(64), {n});
  ir::Var i("i");
  ir::Expr x = ir::Load::Make(a, {i}), y = ir::Load::Make(b, {i});
  ir::Stmt body = ir::For::Make(
      i, 0, n, ir::ForKind::kSerial,
      ir::Block::Make({
          ir::Store::Make(q, {i}, x / y),
          ir::Store::Make(r, {i}, x % y),
          ir::Store::Make(s, {i}, ir::Select::Make(x < y, ir::min(x, y), ir::max(x, y) * 2)),
          ir::Store::Make(f, {i},
                          ir::Cast::Make(ir::Float(64), x) / ir::Expr(4.0) +
                              ir::Cast::Make(ir::Float(64), ir::Cast::Make(ir::Bool(), y > 0))),
      }));
  auto module = testing::MakeModule(
      "int_ops",
      {ir::Argument::Input(a), ir::Argument::Input(b), ir::Argument::Output(q),
       ir::Argument::Output(r), ir::Argument::Output(s), ir::Argument::Output(f)},
      body);
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), module, "int_ops");
  ASSERT_NE(fn, nullptr);
  const int64_t len = 999;
  HostTensor<int32_t> ta({len}), tb({len}), tq({len}), tr({len}), ts({len});
  HostTensor<double> tf({len});
  ta.FillRandom(-1000, 1000);
  tb.FillRandom(-50, 50);
  for (auto& v : tb.data()) v = v == 0 ? 7 : v;
  DLTensor* args[] = {ta.dl(), tb.dl(), tq.dl(), tr.dl(), ts.dl(), tf.dl()};
  ASSERT_EQ(fn(args, 6, nullptr), 0) << cinn_like_get_last_error();
  for (int64_t k = 0; k < len; ++k) {
    int32_t xa = ta[k], yb = tb[k];
    ASSERT_EQ(tq[k], xa / yb) << xa << " / " << yb;
    ASSERT_EQ(tr[k], xa % yb) << xa << " % " << yb;
    ASSERT_EQ(ts[k], xa < yb ? std::min(xa, yb) : std::max(xa, yb) * 2);
    ASSERT_EQ(tf[k], static_cast<double>(xa) / 4.0 + (yb > 0 ? 1.0 : 0.0));
  }
}

// Math calls (intrinsic and libm), scalar and vector, an unrolled loop, and a stack temporary.
TEST(X86Correctness, MathCallsAndTemporaries) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  auto t = ir::MakeBuffer("T", ir::Float(32), {4});
  ir::Var i("i"), k("k");
  ir::Expr x = ir::Load::Make(a, {i * 4 + k});
  ir::Expr v = ir::Load::Make(a, {ir::Ramp::Make(i * 4, 1, 4)});
  ir::Stmt body = ir::For::Make(
      i, 0, n / 4, ir::ForKind::kSerial,
      ir::Allocate::Make(
          t, ir::Block::Make({
                 ir::Store::Make(t, {ir::Ramp::Make(0, 1, 4)},
                                 ir::Call::Make(ir::Float(32, 4), "tanh", {v})),
                 ir::For::Make(k, 0, 4, ir::ForKind::kUnrolled,
                               ir::Store::Make(c, {i * 4 + k},
                                               ir::Call::Make(ir::Float(32), "exp", {x}) +
                                                   ir::Load::Make(t, {k}))),
             })));
  auto module =
      testing::MakeModule("math", {ir::Argument::Input(a), ir::Argument::Output(c)}, body);
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), module, "math");
  ASSERT_NE(fn, nullptr);
  const int64_t len = 128;
  HostTensor<float> ta({len}), tc({len});
  ta.FillRandom(-3, 3);
  tc.Poison();
  DLTensor* args[] = {ta.dl(), tc.dl()};
  ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
  for (int64_t e = 0; e < len; ++e) {
    float want = std::exp(ta[e]) + std::tanh(ta[e]);
    ASSERT_NEAR(tc[e], want, 1e-5f * std::max(1.0f, std::fabs(want))) << e;
  }
}

// A heap temporary of symbolic size.
TEST(X86Correctness, HeapAllocation) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  auto t = ir::MakeBuffer("T", ir::Float(32), {n});
  ir::Var i("i"), j("j");
  ir::Stmt body = ir::Allocate::Make(
      t, ir::Block::Make({
             ir::For::Make(i, 0, n, ir::ForKind::kSerial,
                           ir::Store::Make(t, {i}, ir::Load::Make(a, {i}) + ir::Expr(1.0f))),
             ir::For::Make(j, 0, n, ir::ForKind::kSerial,
                           ir::Store::Make(c, {j}, ir::Load::Make(t, {n - 1 - j}))),
         }));
  auto module =
      testing::MakeModule("heap", {ir::Argument::Input(a), ir::Argument::Output(c)}, body);
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), module, "heap");
  ASSERT_NE(fn, nullptr);
  HostTensor<float> ta({100}), tc({100});
  ta.FillRandom();
  DLTensor* args[] = {ta.dl(), tc.dl()};
  ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
  for (int e = 0; e < 100; ++e) ASSERT_EQ(tc[e], ta[99 - e] + 1.0f);
}

// Bool buffers hold one byte per element (DLPack kDLBool = 6, 8 bits).
TEST(X86Correctness, BoolBuffer) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto b = ir::MakeBuffer("B", ir::Float(32), {n});
  auto m = ir::MakeBuffer("M", ir::Bool(), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  ir::Var i("i"), j("j");
  ir::Expr x = ir::Load::Make(a, {i}), y = ir::Load::Make(b, {i});
  ir::Stmt body = ir::Block::Make({
      ir::For::Make(i, 0, n, ir::ForKind::kSerial, ir::Store::Make(m, {i}, x > y)),
      ir::For::Make(j, 0, n, ir::ForKind::kSerial,
                    ir::Store::Make(c, {j},
                                    ir::Select::Make(ir::Load::Make(m, {j}), ir::Load::Make(a, {j}),
                                                     ir::Load::Make(b, {j})))),
  });
  auto module = testing::MakeModule("bool_max",
                                    {ir::Argument::Input(a), ir::Argument::Input(b),
                                     ir::Argument::Output(m), ir::Argument::Output(c)},
                                    body);
  auto compiler = X86Compiler();
  EntryFunction fn = BuildAndLookup(compiler.get(), module, "bool_max");
  ASSERT_NE(fn, nullptr);
  const int64_t len = 200;
  HostTensor<float> ta({len}), tb({len}), tc({len});
  HostTensor<uint8_t> tm({len}, DLDataType{6, 8, 1});
  ta.FillRandom();
  tb.FillRandom();
  tm.Poison();
  DLTensor* args[] = {ta.dl(), tb.dl(), tm.dl(), tc.dl()};
  ASSERT_EQ(fn(args, 4, nullptr), 0) << cinn_like_get_last_error();
  for (int64_t k = 0; k < len; ++k) {
    ASSERT_EQ(tm[k], ta[k] > tb[k] ? 1 : 0) << k;
    ASSERT_EQ(tc[k], std::max(ta[k], tb[k])) << k;
  }
}

}  // namespace
}  // namespace cinn_like::backends
