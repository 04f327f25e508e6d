/// \file The reference interpreter, op family by op family, on fresh random data against loops
/// written here independently (float64), with the tolerance each dtype's rounding allows.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <random>
#include <utility>
#include <vector>

#include "frontend/net_builder.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"

namespace cinn_like::hlir {
namespace {

using frontend::NetBuilder;
using frontend::Var;

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(std::random_device{}());
  return rng;
}

HostTensor Random(DType t, std::vector<int64_t> shape, double lo = -2, double hi = 2) {
  HostTensor x(t, std::move(shape));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (auto& v : x.data) v = RoundToDType(dist(Rng()), t);
  return x;
}

/// Runs a single-output program built by `build` on `inputs`.
HostTensor RunOne(NetBuilder& b, const Var& out, const std::vector<HostTensor>& inputs) {
  b.MarkOutput(out);
  auto program = b.Build();
  EXPECT_TRUE(program.ok()) << program.status();
  auto graph = frontend::BuildGraph(*program);
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto result = RunReference(*graph, inputs);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? (*result)[0] : HostTensor();
}

TEST(ReferenceOps, ErfinvOfZeroKeepsItsSign) {
  // The bisection ended just below +0, so bessel_k0 of it was NaN where the compiled code gave
  // inf (found by fuzz_compile_run).
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat64, MakeShape({2}), "x");
  HostTensor in(DType::kFloat64, {2});
  in.data = {0.0, -0.0};
  HostTensor out = RunOne(b, b.Op("erfinv", {x})[0], {in});
  ASSERT_EQ(out.data.size(), 2u);
  EXPECT_EQ(out.data[0], 0.0);
  EXPECT_FALSE(std::signbit(out.data[0]));
  EXPECT_EQ(out.data[1], 0.0);
  EXPECT_TRUE(std::signbit(out.data[1]));
}

TEST(ReferenceOps, BesselJAndYAtFarArgumentsTakeTheExactPhase) {
  // Values of mpmath (50 digits) at these doubles. libstdc++'s cyl_bessel_j and cyl_neumann,
  // which the reference used at every argument, subtract the phase x - (nu/2 + 1/4) pi in
  // floating point past 1000: at 1e19 that subtraction rounds to x, and J0 came out as J1.
  struct Point {
    double x, j0, j1, y0, y1;  // y0 and y1 NaN below 0
  };
  const Point points[] = {
      {12345.678, 3.0586713322758251e-05, -0.0071808949647393736, -0.0071808961976121289,
       -3.0877539667217201e-05},
      {1e6, 0.00033104301373987376, -0.00072596835681376301, -0.00072596852233517914,
       -0.00033104337672417626},
      {1e19, -2.3228731060101172e-10, -9.8511839747855878e-11, -9.8511839747855878e-11,
       2.3228731060101172e-10},
      {-3.3e19, 1.6020672950236698e-12, -1.388846342614808e-10, NAN, NAN},
      {-2.5e200, 3.0028573345127707e-101, -4.0555688532271413e-101, NAN, NAN},
      {1e300, -7.8606730627240931e-151, -1.3681360450342481e-151, -1.3681360450342481e-151,
       7.8606730627240931e-151},
  };
  HostTensor in(DType::kFloat64, {static_cast<int64_t>(std::size(points))});
  for (size_t i = 0; i < std::size(points); ++i) in.data[i] = points[i].x;
  const std::pair<const char*, double Point::*> ops[] = {{"bessel_j0", &Point::j0},
                                                         {"bessel_j1", &Point::j1},
                                                         {"bessel_y0", &Point::y0},
                                                         {"bessel_y1", &Point::y1}};
  for (const auto& [op, value] : ops) {
    NetBuilder b;
    Var x = b.CreateInput(DType::kFloat64, MakeShape({in.shape[0]}), "x");
    HostTensor out = RunOne(b, b.Op(op, {x})[0], {in});
    ASSERT_EQ(out.data.size(), std::size(points)) << op;
    for (size_t i = 0; i < std::size(points); ++i) {
      const Point& p = points[i];
      const double want = p.*value;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out.data[i])) << op << "(" << p.x << ") = " << out.data[i];
        continue;
      }
      // Within 1e-15 of the oscillation's amplitude sqrt(2 / (pi |x|)).
      const double amplitude = std::sqrt(2 / (M_PI * std::fabs(p.x)));
      EXPECT_NEAR(out.data[i], want, 1e-15 * amplitude) << op << "(" << p.x << ")";
    }
  }
}

TEST(ReferenceOps, PolygammaFarBelowZeroReflects) {
  // psi_n(x) = (-1)^n psi_n(y) - pi^(n+1) P_n(cot(pi x)), y = 1 - x: at x = m + 1/4 (cot 1)
  // psi_1(x) = 2 pi^2 - psi_1(y) and psi_2(x) = psi_2(y) - 4 pi^3; at x = m + 1/2 (cot 0, P_n
  // odd for even n) psi_n(x) = psi_n(y). The reference summed 1000 - x terms from x, their
  // count cast to an int: UB past 2^31 (the output of a polygamma near its poles fed to
  // another, found by fuzz_compile_run), 1e9 terms at -1e9.
  auto far = [](int64_t n, double y) {  // psi_n(y) for y >= 2e6, to 1e-13 relative
    const double sign = n % 2 ? 1 : -1;
    return sign * (std::tgamma(n) / std::pow(y, n) + std::tgamma(n + 1) / (2 * std::pow(y, n + 1)));
  };
  struct Case {
    int64_t n;
    double x;
  };
  for (const Case& c : std::vector<Case>{{1, -14343000000.75},
                                         {1, -1e9 - 0.75},
                                         {1, -2e6 - 0.75},
                                         {2, -14343000000.75},
                                         {2, -1e9 - 0.75},
                                         {2, -2e6 - 0.75},
                                         {2, -1e9 - 0.5},
                                         {6, -1e9 - 0.5}}) {
    NetBuilder b;
    Var x = b.CreateInput(DType::kFloat64, MakeShape({1}), "x");
    HostTensor in(DType::kFloat64, {1});
    in.data = {c.x};
    HostTensor out = RunOne(b, b.Op("polygamma", {x}, {{"n", c.n}})[0], {in});
    ASSERT_EQ(out.data.size(), 1u);
    const double y = 1 - c.x;
    const bool quarter = c.x - std::floor(c.x) == 0.25;
    const double want = !quarter   ? far(c.n, y)
                        : c.n == 1 ? 2 * M_PI * M_PI - far(1, y)
                                   : far(2, y) - 4 * std::pow(M_PI, 3);
    EXPECT_NEAR(out.data[0], want, 1e-12 * std::fabs(want))
        << "polygamma(" << c.n << ", " << c.x << ")";
  }
}

TEST(ReferenceOps, AiryAiNearZeroIsAi0PlusAiPrime0TimesX) {
  // Ai(x) = Ai(0) + Ai'(0) x to double's precision for |x| <= 1e-60. libstdc++'s airy_ai gave
  // inf below 1e-299, threw near +-1e-205 (an error naming the op: a zeta's output fed to
  // airy_ai, found by fuzz_compile_run), NaN below -1e-190 and 1e-14 off below 1e-56.
  const double ai0 = 0.355028053887817239, dai0 = -0.258819403792806798;
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat64, MakeShape({9}), "x");
  HostTensor in(DType::kFloat64, {9});
  in.data = {0.0, 1e-300, -1e-300, 1e-205, -1e-205, -1e-195, 1e-100, -1e-60, 5e-324};
  HostTensor out = RunOne(b, b.Op("airy_ai", {x})[0], {in});
  ASSERT_EQ(out.data.size(), 9u);
  for (size_t i = 0; i < in.data.size(); ++i) {
    EXPECT_NEAR(out.data[i], ai0 + dai0 * in.data[i], 1e-16) << "airy_ai(" << in.data[i] << ")";
  }
}

TEST(ReferenceOps, UnaryMathMatchesLibmWithinOneUlpOfTheDType) {
  struct Case {
    std::string op;
    double (*fn)(double);
    double lo;
  };
  std::vector<Case> cases = {
      {"exp", [](double x) { return std::exp(x); }, -2},
      {"log", [](double x) { return std::log(x); }, 0.01},
      {"tanh", [](double x) { return std::tanh(x); }, -2},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -2},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.01},
      {"silu", [](double x) { return x / (1 + std::exp(-x)); }, -2},
      {"relu", [](double x) { return x > 0 ? x : 0.0; }, -2},
  };
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
    for (const Case& c : cases) {
      NetBuilder b;
      Var x = b.CreateInput(t, MakeShape({7, 13}), "x");
      HostTensor in = Random(t, {7, 13}, c.lo, 2);
      HostTensor out = RunOne(b, b.Op(c.op, {x})[0], {in});
      ASSERT_EQ(out.size(), in.size());
      // One unit in the last place of the dtype: formulas that differ in the last bit of a
      // double may round to neighbouring values.
      double ulp = t == DType::kFloat64 ? 1e-15 : t == DType::kFloat32 ? 1.2e-7 : 1e-3;
      for (int64_t i = 0; i < in.size(); ++i) {
        double expect = RoundToDType(c.fn(in.data[i]), t);
        EXPECT_NEAR(out.data[i], expect, ulp * std::max(1.0, std::fabs(expect)))
            << c.op << " " << DTypeName(t) << " at x=" << in.data[i];
      }
    }
  }
}

TEST(ReferenceOps, GeluBothFormsAndCastRoundTrip) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({64}), "x");
  Var erf = b.Gelu(x), tanh = b.Gelu(x, "tanh");
  Var half = b.Cast(b.Cast(x, DType::kFloat16), DType::kFloat32);
  b.MarkOutput(erf);
  b.MarkOutput(tanh);
  b.MarkOutput(half);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  HostTensor in = Random(DType::kFloat32, {64}, -4, 4);
  auto out = RunReference(*graph, {in});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < 64; ++i) {
    double v = in.data[i];
    EXPECT_NEAR((*out)[0].data[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6);
    EXPECT_NEAR((*out)[1].data[i],
                0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))), 1e-6);
    EXPECT_NEAR((*out)[0].data[i], (*out)[1].data[i], 2e-3);  // the approximation is close
    EXPECT_EQ((*out)[2].data[i], RoundToDType(v, DType::kFloat16));
  }
}

TEST(ReferenceOps, BinaryBroadcastingAndPyTorchSemantics) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({3, 1, 5}), "x");
  Var y = b.CreateInput(DType::kFloat32, MakeShape({4, 5}), "y");
  HostTensor hx = Random(DType::kFloat32, {3, 1, 5}), hy = Random(DType::kFloat32, {4, 5});
  HostTensor sub = RunOne(b, b.Sub(x, y), {hx, hy});
  ASSERT_EQ(sub.shape, (std::vector<int64_t>{3, 4, 5}));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 5; ++k) {
        EXPECT_EQ(sub.data[(i * 4 + j) * 5 + k],
                  RoundToDType(hx.data[i * 5 + k] - hy.data[j * 5 + k], DType::kFloat32));
      }
    }
  }
  // mod takes the divisor's sign; integer division needs a rounding mode.
  NetBuilder m;
  Var a = m.CreateInput(DType::kInt32, MakeShape({4}), "a");
  Var d = m.CreateInput(DType::kInt32, MakeShape({4}), "d");
  HostTensor ha(DType::kInt32, {4}), hd(DType::kInt32, {4});
  ha.data = {7, -7, 7, -7};
  hd.data = {3, 3, -3, -3};
  HostTensor mod = RunOne(m, m.Mod(a, d), {ha, hd});
  EXPECT_EQ(mod.data, (std::vector<double>{1, 2, -2, -1}));
  NetBuilder f;
  Var fa = f.CreateInput(DType::kInt32, MakeShape({4}), "a");
  Var fd = f.CreateInput(DType::kInt32, MakeShape({4}), "d");
  HostTensor floor_div = RunOne(f, f.Div(fa, fd, "floor"), {ha, hd});
  EXPECT_EQ(floor_div.data, (std::vector<double>{2, -3, -3, 2}));
}

TEST(ReferenceOps, MaxAndMinOfNoElementsAreRefusedWhereSumsAreZero) {
  // PyTorch: sum of nothing is 0, amax/amin of nothing raises (issue 50). An empty result
  // reduces nothing and is fine.
  const hlir::OpRegistry& r = hlir::OpRegistry::Global();
  const hlir::TensorDesc x{DType::kFloat32, MakeShape({0, 3})};
  for (const char* op : {"reduce_max", "reduce_min"}) {
    auto bad = r.Infer(op, {x}, {{"axes", std::vector<int64_t>{0}}});
    ASSERT_FALSE(bad.ok()) << op;
    EXPECT_NE(std::string(bad.status().message())
                  .find(std::string("op ") + op + ": axis 0 of input 0 (float32[0, 3]) is empty"),
              std::string::npos)
        << bad.status();
    EXPECT_TRUE(r.Infer(op, {x}, {{"axes", std::vector<int64_t>{1}}}).ok()) << op;
  }
  EXPECT_TRUE(r.Infer("reduce_sum", {x}, {{"axes", std::vector<int64_t>{0}}}).ok());
}

TEST(ReferenceOps, ReductionsOverAnyAxesWithKeepdim) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4, 5, 6}), "x");
  Var sum = b.ReduceSum(x, {0, 2}, true), mx = b.ReduceMax(x, {-1}), am = b.Argmax(x, 1);
  b.MarkOutput(sum);
  b.MarkOutput(mx);
  b.MarkOutput(am);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  HostTensor hx = Random(DType::kFloat32, {4, 5, 6});
  auto out = RunReference(*graph, {hx});
  ASSERT_TRUE(out.ok()) << out.status();
  auto at = [&](int i, int j, int k) { return hx.data[(i * 5 + j) * 6 + k]; };
  ASSERT_EQ((*out)[0].shape, (std::vector<int64_t>{1, 5, 1}));
  for (int j = 0; j < 5; ++j) {
    double s = 0;
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 6; ++k) s += at(i, j, k);
    EXPECT_NEAR((*out)[0].data[j], s, 1e-5);
  }
  ASSERT_EQ((*out)[1].shape, (std::vector<int64_t>{4, 5}));
  ASSERT_EQ((*out)[2].dtype, DType::kInt64);
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 6; ++k) {
      int best = 0;
      for (int j = 1; j < 5; ++j) best = at(i, j, k) > at(i, best, k) ? j : best;
      EXPECT_EQ((*out)[2].data[i * 6 + k], best);
    }
    for (int j = 0; j < 5; ++j) {
      double m = -INFINITY;
      for (int k = 0; k < 6; ++k) m = std::max(m, at(i, j, k));
      EXPECT_EQ((*out)[1].data[i * 5 + j], m);
    }
  }
}

TEST(ReferenceOps, SoftmaxAndLayerNormRows) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat64, MakeShape({3, 17}), "x");
  Var g = b.CreateInput(DType::kFloat64, MakeShape({17}), "g");
  Var bb = b.CreateInput(DType::kFloat64, MakeShape({17}), "b");
  b.MarkOutput(b.Softmax(x));
  b.MarkOutput(b.LayerNorm(x, g, bb));
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  HostTensor hx = Random(DType::kFloat64, {3, 17}, -5, 5), hg = Random(DType::kFloat64, {17}),
             hb = Random(DType::kFloat64, {17});
  auto out = RunReference(*graph, {hx, hg, hb});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int r = 0; r < 3; ++r) {
    double z = 0, mean = 0, var = 0;
    for (int k = 0; k < 17; ++k) z += std::exp(hx.data[r * 17 + k]);
    for (int k = 0; k < 17; ++k) mean += hx.data[r * 17 + k] / 17;
    for (int k = 0; k < 17; ++k) var += std::pow(hx.data[r * 17 + k] - mean, 2) / 17;
    for (int k = 0; k < 17; ++k) {
      EXPECT_NEAR((*out)[0].data[r * 17 + k], std::exp(hx.data[r * 17 + k]) / z, 1e-12);
      EXPECT_NEAR((*out)[1].data[r * 17 + k],
                  (hx.data[r * 17 + k] - mean) / std::sqrt(var + 1e-5) * hg.data[k] + hb.data[k],
                  1e-12);
    }
  }
}

TEST(ReferenceOps, BatchedMatmulWithTransposesAndLinear) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat64, MakeShape({2, 1, 5, 3}), "x");  // transposed: m=3, k=5
  Var y = b.CreateInput(DType::kFloat64, MakeShape({4, 5, 6}), "y");
  HostTensor hx = Random(DType::kFloat64, {2, 1, 5, 3}), hy = Random(DType::kFloat64, {4, 5, 6});
  HostTensor out = RunOne(b, b.Matmul(x, y, true, false), {hx, hy});
  ASSERT_EQ(out.shape, (std::vector<int64_t>{2, 4, 3, 6}));
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 4; ++q) {
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 6; ++j) {
          double acc = 0;
          for (int k = 0; k < 5; ++k)
            acc += hx.data[(p * 5 + k) * 3 + i] * hy.data[(q * 5 + k) * 6 + j];
          EXPECT_NEAR(out.data[((p * 4 + q) * 3 + i) * 6 + j], acc, 1e-12);
        }
      }
    }
  }
}

TEST(ReferenceOps, ShapeOpsMoveTheRightElements) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3, 4}), "x");
  Var t = b.Transpose(x, {2, 0, 1});
  Var s = b.Slice(t, {0, 2}, {1, -2}, {4, 3}, {2, 1});
  HostTensor hx = Random(DType::kFloat32, {2, 3, 4});
  HostTensor out = RunOne(b, s, {hx});
  // t[k, i, j] = x[i, j, k]; s = t[1:4:2, :, 1:3]
  ASSERT_EQ(out.shape, (std::vector<int64_t>{2, 2, 2}));
  int64_t flat = 0;
  for (int k = 1; k < 4; k += 2) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 1; j < 3; ++j) EXPECT_EQ(out.data[flat++], hx.data[(i * 3 + j) * 4 + k]);
    }
  }
  NetBuilder c;
  Var a = c.CreateInput(DType::kFloat32, MakeShape({2, 3}), "a");
  Var d = c.CreateInput(DType::kFloat32, MakeShape({2, 1}), "d");
  HostTensor ha = Random(DType::kFloat32, {2, 3}), hd = Random(DType::kFloat32, {2, 1});
  HostTensor cat = RunOne(c, c.Concat({a, d}, 1), {ha, hd});
  EXPECT_EQ(cat.data, (std::vector<double>{ha.data[0], ha.data[1], ha.data[2], hd.data[0],
                                           ha.data[3], ha.data[4], ha.data[5], hd.data[1]}));
}

}  // namespace
}  // namespace cinn_like::hlir
