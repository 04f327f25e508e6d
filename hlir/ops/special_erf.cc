/// \file Special functions of the error-function family: erfinv, erfcx and ndtri, the inverse
/// of the normal distribution function (special_functions.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "hlir/ops/elementwise_def.h"
#include "hlir/ops/special_functions.h"
#include "hlir/ops/special_util.h"

namespace cinn_like::hlir::ops::special {
namespace {

// --- erfinv ----------------------------------------------------------------------------

/// erfinv by bisection on erf: y in (-1, 1); +-inf at +-1, NaN outside.
double Erfinv(double y) {
  if (std::isnan(y) || std::fabs(y) > 1) return kNan;
  if (y == 0) return y;  // +-0 exactly (the bisection ended at -5e-324 below +0)
  if (std::fabs(y) == 1) return std::copysign(kInf, y);
  double lo = -6, hi = 6;  // erf(6) is 1 in double
  for (int i = 0; i < 200 && lo < hi; ++i) {
    double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
/// PyTorch's calc_erfinv: a rational first guess (central for |y| <= 0.7, tail beyond), then
/// two Newton steps on erf(x) - y.
Expr Erfinv(const Expr& in) {
  Expr y = F64(in);
  Expr ay = M(MathOp::kAbs, y);
  const double a[] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
  const double b[] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
  const double c[] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
  const double d[] = {3.543889200, 1.637067800};
  Expr z = y * y;
  Expr num = ((D(a[3]) * z + D(a[2])) * z + D(a[1])) * z + D(a[0]);
  Expr dem = (((D(b[3]) * z + D(b[2])) * z + D(b[1])) * z + D(b[0])) * z + D(1);
  Expr central = y * num / dem;
  // The tail's log argument is clamped positive so that |y| >= 1 computes a finite guess (the
  // result is replaced below).
  Expr w = M(MathOp::kSqrt, -ir::Log(ir::max((D(1) - ay) / D(2), D(1e-300))));
  Expr tnum = ((D(c[3]) * w + D(c[2])) * w + D(c[1])) * w + D(c[0]);
  Expr tdem = (D(d[1]) * w + D(d[0])) * w + D(1);
  Expr tail = ir::MathCall(MathOp::kCopysign, {tnum, y}) / tdem;
  Expr x = Select::Make(ay <= D(0.7), central, tail);
  for (int step = 0; step < 2; ++step) {
    x = x - (ir::Erf(x) - y) / (D(2 / std::sqrt(M_PI)) * ir::Exp(-x * x));
  }
  Expr edge = Select::Make(ay == D(1), ir::MathCall(MathOp::kCopysign, {D(kInf), y}), D(kNan));
  return Select::Make(ay < D(1), x, edge);
}

// --- erfcx -----------------------------------------------------------------------------

/// erfcx(x) = exp(x^2) erfc(x); reference: the continued fraction of erfc from x >= 5.
double Erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 5) return std::exp(x * x) * std::erfc(x);
  double f = x;  // x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))), 100 levels from the bottom
  for (int k = 100; k >= 1; --k) f = x + (k / 2.0) / f;
  return 1 / (std::sqrt(M_PI) * f);
}
/// The definition below 25 (exp(x^2)'s relative error is x^2 ulp there), the asymptotic series
/// 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k from 25 (8 terms: below 1e-17).
Expr Erfcx(const Expr& in) {
  Expr x = F64(in);
  Expr direct = ir::Exp(x * x) * M(MathOp::kErfc, x);
  Expr u = D(1) / (D(2) * x * x);
  Expr s = D(1);
  for (int k = 8; k >= 1; --k) s = D(1) - D(2 * k - 1) * u * s;
  Expr asymptotic = s / (x * D(std::sqrt(M_PI)));
  return Select::Make(x < D(25), direct, asymptotic);
}

// --- ndtri -----------------------------------------------------------------------------

/// The standard normal quantile: for q = min(p, 1 - p), a first guess (the cubic
/// sqrt(2 pi)(q - 1/2) + ... above 0.2, Abramowitz and Stegun 26.2.23 in the tail), then three
/// Newton steps on Phi(x) = erfc(-x/sqrt 2)/2, which keeps its relative accuracy in the lower
/// tail; 1 - p is exact for p >= 1/2. -inf at 0, +inf at 1, NaN outside.
Expr Ndtri(const Expr& in) {
  Expr p = F64(in);
  Expr q = Select::Make(p <= D(0.5), p, D(1) - p);
  Expr s = D(std::sqrt(2 * M_PI)) * (q - D(0.5));
  Expr central = s * (D(1) + s * s / D(6));
  Expr t = M(MathOp::kSqrt, D(-2) * ir::Log(q));
  Expr tail =
      Horner(t, {2.515517, 0.802853, 0.010328}) / Horner(t, {1, 1.432788, 0.189269, 0.001308}) - t;
  Expr x = Select::Make(q > D(0.2), central, tail);
  for (int step = 0; step < 3; ++step) {
    Expr phi_inv = ir::Exp(ir::min(ir::Pow(x, D(2)) / D(2), D(700)));
    x = x - (D(0.5) * M(MathOp::kErfc, x * D(-M_SQRT1_2)) - q) * D(std::sqrt(2 * M_PI)) * phi_inv;
  }
  Expr r = Select::Make(p <= D(0.5), x, D(0) - x);
  r = Select::Make(p == D(0), D(-kInf), Select::Make(p == D(1), D(kInf), r));
  return Select::Make(p < D(0) || p > D(1), D(kNan), r);
}
/// Reference: bisection on Phi.
double Ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNan;
  if (p == 0 || p == 1) return p == 0 ? -kInf : kInf;
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (0.5 * std::erfc(-mid * M_SQRT1_2) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

void RegisterErrorFunctionOps(OpRegistry& r) {
  FloatUnary(r, "erfinv", Erfinv, Erfinv);
  FloatUnary(r, "erfcx", Erfcx, Erfcx);
  FloatUnary(r, "ndtri", Ndtri, Ndtri);
}

}  // namespace cinn_like::hlir::ops::special
