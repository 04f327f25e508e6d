/// \file Special functions that no backend has as one math call (digamma, erfinv, erfcx, i0,
/// i0e): each is written in lang from series and approximations, and computed in float64
/// whatever the operand's float type (the compute rounds the result once to the output type),
/// so float32, float16 and bfloat16 get their correctly rounded value up to float64's error.
/// The reference on doubles takes an independent route where one exists (C++17's
/// cyl_bessel_i, bisection on erf, the continued fraction of erfc).
#include <cmath>
#include <limits>

#include "hlir/ops/compute_util.h"
#include "hlir/ops/elementwise_def.h"
#include "ir/math.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::MathOp;
using ir::Select;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

Expr M(MathOp op, Expr x) { return ir::MathCall(op, {std::move(x)}); }
Expr D(double v) { return Const(ir::Float(64), v); }
Expr F64(const Expr& x) { return ir::Cast::Make(ir::Float(64), x); }

// --- digamma ---------------------------------------------------------------------------

/// ln x - 1/(2x) - sum B_2k / (2k x^2k): the asymptotic series, to double precision for x >= 10.
double DigammaAsymptotic(double x) {
  const double z = 1.0 / (x * x);
  const double b[] = {1.0 / 12,  -1.0 / 120,     1.0 / 252, -1.0 / 240,
                      1.0 / 132, -691.0 / 32760, 1.0 / 12};
  double p = 0;
  for (int k = 6; k >= 0; --k) p = p * z + b[k];
  return std::log(x) - 0.5 / x - z * p;
}
Expr DigammaAsymptotic(const Expr& x) {
  Expr z = D(1) / (x * x);
  const double b[] = {1.0 / 12,  -1.0 / 120,     1.0 / 252, -1.0 / 240,
                      1.0 / 132, -691.0 / 32760, 1.0 / 12};
  Expr p = D(b[6]);
  for (int k = 5; k >= 0; --k) p = p * z + D(b[k]);
  return ir::Log(x) - D(0.5) / x - z * p;
}

/// digamma as PyTorch's calc_digamma: poles at 0 (-inf from +0, +inf from -0) and NaN at the
/// negative integers; reflection psi(x) = psi(1 - x) - pi / tan(pi * frac(x)) below 0; the
/// recurrence psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series.
double Digamma(double x) {
  if (x == 0) return std::copysign(kInf, -x);
  if (x < 0) {
    if (x == std::trunc(x)) return kNan;
    return Digamma(1 - x) - M_PI / std::tan(M_PI * (x - std::trunc(x)));
  }
  double shift = 0;
  for (; x < 10; x += 1) shift += 1 / x;
  return DigammaAsymptotic(x) - shift;
}
/// The same in lang, branch free: the recurrence always takes 10 steps (exact in theory, and
/// the series is only more accurate further out).
Expr Digamma(const Expr& in) {
  Expr x = F64(in);
  Expr neg = x < D(0);
  Expr y = Select::Make(neg, D(1) - x, x);
  Expr shift = D(0);
  for (int k = 0; k < 10; ++k) shift = shift + D(1) / (y + D(k));
  Expr psi = DigammaAsymptotic(y + D(10)) - shift;
  Expr t = M(MathOp::kTrunc, x);
  Expr reflected = psi - D(M_PI) / M(MathOp::kTan, D(M_PI) * (x - t));
  Expr r = Select::Make(neg, Select::Make(x == t, D(kNan), reflected), psi);
  // 0 - copysign(inf, x), not copysign(inf, -x): a negation may lower to 0 - x, which loses
  // the sign of zero.
  return Select::Make(x == D(0), D(0) - ir::MathCall(MathOp::kCopysign, {D(kInf), x}), r);
}

// --- erfinv ----------------------------------------------------------------------------

/// erfinv by bisection on erf: y in (-1, 1); +-inf at +-1, NaN outside.
double Erfinv(double y) {
  if (std::isnan(y) || std::fabs(y) > 1) return kNan;
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

// --- i0, i0e ---------------------------------------------------------------------------

/// The modified Bessel function I0 (even; +inf at +-inf, where PyTorch's Chebyshev form gives
/// NaN) and exp(-|x|) I0(x), scaled when `scaled`: the power
/// series sum ((x/2)^2)^k / (k!)^2 up to |x| = 30 (50 terms, all positive), the asymptotic
/// series exp(|x|) / sqrt(2 pi |x|) sum ((2k-1)!!)^2 / (k! (8|x|)^k) beyond (16 terms).
Expr BesselI0(const Expr& in, bool scaled) {
  Expr ax = M(MathOp::kAbs, F64(in));
  Expr q = ax * ax / D(4);
  Expr term = D(1), sum = D(1);
  for (int k = 1; k <= 50; ++k) {
    term = term * q / D(double(k) * k);
    sum = sum + term;
  }
  Expr series = scaled ? sum * ir::Exp(-ax) : sum;
  Expr v = D(1) / (D(8) * ax);
  Expr s = D(1);
  for (int k = 16; k >= 1; --k) s = D(1) + D((2.0 * k - 1) * (2.0 * k - 1) / k) * v * s;
  Expr pre = D(1) / M(MathOp::kSqrt, D(2 * M_PI) * ax);
  // exp(|x|) split in two halves: exp(709) is finite, exp(|x| / 2)^2 keeps I0 finite to 713.
  Expr half = ir::Exp(ax / D(2));
  Expr asymptotic = scaled ? s * pre : Select::Make(ax == D(kInf), ax, s * pre * half * half);
  return Select::Make(ax <= D(30), series, asymptotic);
}
double BesselI0(double x) { return std::isinf(x) ? kInf : std::cyl_bessel_i(0.0, std::fabs(x)); }
double BesselI0e(double x) {
  if (std::isinf(x)) return 0;
  return std::isnan(x) ? x : std::exp(-std::fabs(x)) * BesselI0(x);
}

}  // namespace

void RegisterSpecialFunctionOps(OpRegistry& r) {
  const auto kF = DTypeClass::kFloat;
  const auto same = OutDType::kSame;
  using X = const Expr&;
  RegisterUnary(r, "digamma", kF, same, Digamma, Digamma);
  RegisterUnary(r, "erfinv", kF, same, Erfinv, Erfinv);
  RegisterUnary(r, "erfcx", kF, same, Erfcx, Erfcx);
  RegisterUnary(r, "i0", kF, same, BesselI0, [](X x) { return BesselI0(x, false); });
  RegisterUnary(r, "i0e", kF, same, BesselI0e, [](X x) { return BesselI0(x, true); });
}

}  // namespace cinn_like::hlir::ops
