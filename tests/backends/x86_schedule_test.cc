/// \file Every dataflow schedule primitive computes the right numbers on x86: fresh random
/// inputs, a float64 reference, relative L2 error bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "backends/compiler.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

namespace cinn_like::examples {
namespace {

using ir::Expr;
using ir::Float;
using ir::Tensor;

void Check(const Example& ex) {
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = BuildExample(ex, **compiler);
  ASSERT_TRUE(built.ok()) << built;
  for (int64_t n : ex.sizes) {
    auto report = RunExample(ex, **compiler, n);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->passed) << ex.name << " " << report->ToString() << " tolerance "
                                << ex.tolerance;
  }
}

Example Elementwise(std::string name,
                    std::function<absl::StatusOr<ir::LoweredFunc>(const ir::Target&)> build,
                    std::function<double(double)> ref, int64_t in_size, int64_t out_size,
                    std::function<double(const std::vector<float>&, int64_t)> ref_at = nullptr,
                    double tolerance = 1e-6) {
  Example ex;
  ex.name = std::move(name);
  ex.build = std::move(build);
  ex.shapes = [=](int64_t) { return std::vector<std::vector<int64_t>>{{in_size}, {out_size}}; };
  ex.reference = [=](std::vector<std::vector<float>>& args, int64_t) {
    for (int64_t i = 0; i < out_size; ++i) {
      args[1][i] = static_cast<float>(ref_at ? ref_at(args[0], i) : ref(args[0][i]));
    }
  };
  ex.num_inputs = 1;
  ex.sizes = {out_size};
  ex.tolerance = tolerance;
  return ex;
}

TEST(X86Schedule, ComputeInline) {
  Check(Elementwise(
      "inline",
      [](const ir::Target& t) -> absl::StatusOr<ir::LoweredFunc> {
        Tensor a = ir::Placeholder("A", Float(32), {Expr(1000)});
        Tensor b = ir::Compute(
            {Expr(1000)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f + 1.0f; }, "B");
        Tensor c = ir::Compute(
            {Expr(1000)}, [&](const std::vector<Expr>& i) { return b(i[0]) * b(i[0]) + a(i[0]); },
            "C");
        auto sch = ir::Schedule::Create({c});
        absl::Status st = sch[b].ComputeInline();
        if (!st.ok()) return st;
        return ir::Lower("inline", {a, c}, sch, t);
      },
      [](double a) { return (a * 2 + 1) * (a * 2 + 1) + a; }, 1000, 1000));
}

TEST(X86Schedule, ReverseComputeInline) {
  Check(Elementwise(
      "reverse_inline",
      [](const ir::Target& t) -> absl::StatusOr<ir::LoweredFunc> {
        Tensor a = ir::Placeholder("A", Float(32), {Expr(777)});
        Tensor b = ir::Compute(
            {Expr(777)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 3.0f; }, "B");
        Tensor c = ir::Compute(
            {Expr(777)}, [&](const std::vector<Expr>& i) { return b(i[0]) * Expr(0.5f) - a(i[0]); },
            "C");
        auto sch = ir::Schedule::Create({c});
        auto parts = sch[b].Split(*sch[b].LeafAxis(0), 16);  // the producer's loops carry it
        if (!parts.ok()) return parts.status();
        absl::Status st = sch[c].ReverseComputeInline();
        if (!st.ok()) return st;
        return ir::Lower("reverse_inline", {a, c}, sch, t);
      },
      [](double a) { return a * 3 * 0.5 - a; }, 777, 777));
}

TEST(X86Schedule, ComputeAtWithAHaloAndATail) {
  // C[i] = B[i] + B[i + 1], B = A * 2 + 1; 60 = 7 * 8 + 4 elements: the last tile is partial.
  Check(Elementwise(
      "compute_at_halo",
      [](const ir::Target& t) -> absl::StatusOr<ir::LoweredFunc> {
        Tensor a = ir::Placeholder("A", Float(32), {Expr(61)});
        Tensor b = ir::Compute(
            {Expr(61)}, [&](const std::vector<Expr>& i) { return a(i[0]) * 2.0f + 1.0f; }, "B");
        Tensor c = ir::Compute(
            {Expr(60)}, [&](const std::vector<Expr>& i) { return b(i[0]) + b(i[0] + 1); }, "C");
        auto sch = ir::Schedule::Create({c});
        auto parts = sch[c].Split(*sch[c].LeafAxis(0), 8);
        if (!parts.ok()) return parts.status();
        absl::Status st = sch[b].ComputeAt(sch[c], parts->first);
        if (!st.ok()) return st;
        return ir::Lower("compute_at_halo", {a, c}, sch, t);
      },
      nullptr, 61, 60,
      [](const std::vector<float>& a, int64_t i) {
        return (a[i] * 2.0 + 1) + (a[i + 1] * 2.0 + 1);
      }));
}

TEST(X86Schedule, RfactorOfASumWithATail) {
  Check(Elementwise(
      "rfactor_sum",
      [](const ir::Target& t) -> absl::StatusOr<ir::LoweredFunc> {
        Tensor a = ir::Placeholder("A", Float(32), {Expr(1000)});
        ir::IterVar k = ir::ReduceAxis(Expr(1000), "k");
        Tensor b = ir::Compute(
            {Expr(1)}, [&](const std::vector<Expr>&) { return ir::ReduceSum(a(k.var), {k}); }, "B");
        auto sch = ir::Schedule::Create({b});
        auto ks = sch[b].Split(k.var, 32);
        if (!ks.ok()) return ks.status();
        auto rf = sch.Rfactor(b, ks->second);
        if (!rf.ok()) return rf.status();
        return ir::Lower("rfactor_sum", {a, b}, sch, t);
      },
      nullptr, 1000, 1,
      [](const std::vector<float>& a, int64_t) {
        double s = 0;
        for (float v : a) s += v;
        return s;
      },
      // float32 partial sums of 1000 values in [-1, 1) whose total may be small: the error
      // relative to the total is bounded by ~1000 * 2^-24 * sum|a| / |sum a|, not by 1e-6.
      1e-4));
}

Example Matmul(std::string name, int size, MatmulSharedConfig config) {
  Example ex;
  ex.name = name;
  ex.build = [=](const ir::Target& t) { return BuildMatmulShared(t, size, config, name); };
  ex.shapes = [=](int64_t) {
    return std::vector<std::vector<int64_t>>{{size, size}, {size, size}, {size, size}};
  };
  ex.reference = [=](std::vector<std::vector<float>>& args, int64_t) {
    for (int i = 0; i < size; ++i) {
      for (int j = 0; j < size; ++j) {
        double acc = 0;
        for (int k = 0; k < size; ++k) acc += double(args[0][i * size + k]) * args[1][k * size + j];
        args[2][i * size + j] = static_cast<float>(acc);
      }
    }
  };
  ex.sizes = {size};
  ex.tolerance = 1e-5;
  return ex;
}

TEST(X86Schedule, TiledMatmulWithCacheReadCacheWriteComputeAt) {
  Check(Matmul("mm_small", 64, {32, 4, 8}));
  Check(Matmul("mm_256", 256, {64, 8, 16}));
  Check(Matmul("mm_tail", 100, {32, 4, 8}));  // partial block tiles and k slices
}

TEST(X86Schedule, TiledMatmulWithStridedThreadTiles) {
  MatmulSharedConfig strided{32, 4, 8};
  strided.strided_threads = true;
  Check(Matmul("mm_strided", 64, strided));
  Check(Matmul("mm_strided_tail", 100, strided));
}

TEST(X86Schedule, TiledMatmulWithPaddedSharedRows) {
  Check(Matmul("mm_padded", 96, {32, 4, 8, /*shared_row_pad=*/3}));
}

TEST(X86Schedule, MatmulSharedExample) {
  auto ex = Find("matmul_shared");
  ASSERT_TRUE(ex.ok()) << ex.status();
  Check(*ex);
}

TEST(X86Schedule, SharedAndLocalBuffersLiveOnTheStack) {
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  auto f = BuildMatmulShared(ir::Target::X86(), 64, {32, 4, 8}, "mm");
  ASSERT_TRUE(f.ok()) << f.status();
  auto source = (*compiler)->GetSourceCode({"mm", ir::Target::X86(), {*f}});
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT(*source, ::testing::HasSubstr("%A_shared = alloca float"));
  EXPECT_THAT(*source, ::testing::HasSubstr("%C_local = alloca float"));
  EXPECT_THAT(*source, ::testing::Not(::testing::HasSubstr("@malloc")));
}

}  // namespace
}  // namespace cinn_like::examples
