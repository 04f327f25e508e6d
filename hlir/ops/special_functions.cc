/// \file Special functions that no backend has as one math call (digamma, polygamma, erfinv,
/// erfcx, the Bessel functions i0, i0e, i1, i1e, K0, K1 and their scaled forms, J0, J1, Y0, Y1,
/// spherical j0, Hurwitz zeta, the regularized incomplete gammas, ndtri) and the bit-level
/// frexp and nextafter: each is written in lang from series, quadratures and approximations,
/// and computed in float64 whatever the operand's float type (the compute rounds the result
/// once to the output type), so float32, float16 and bfloat16 get their correctly rounded value
/// up to float64's error. Expressions are trees (a shared subexpression is computed at each
/// use), so recurrences are written so that each step uses the previous one once.
/// The reference on doubles takes an independent route where one exists (C++17's cyl_bessel_i
/// and cyl_bessel_k below 500, cyl_bessel_j and cyl_neumann below 1000, riemann_zeta, bisection
/// on erf and on Phi, the continued fraction of erfc, long direct sums, frexp and nextafter from
/// <cmath>).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <glog/logging.h>

#include "absl/strings/str_cat.h"

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

// --- shared helpers --------------------------------------------------------------------

/// sum_k c[k] z^k by Horner's rule. Expressions are trees (a subexpression used twice is
/// computed twice), so every series below is written with constant coefficients or from its
/// last term inwards: each step uses the previous one once, and the tree grows linearly.
Expr Horner(const Expr& z, const std::vector<double>& c) {
  Expr p = D(c.back());
  for (int k = static_cast<int>(c.size()) - 2; k >= 0; --k) p = p * z + D(c[k]);
  return p;
}

double Factorial(int n) { return std::tgamma(n + 1.0); }

/// The coefficients c[k] = (-1)^k a_k(nu) (alternate) or a_k(nu) of the Hankel expansions in
/// 1/x, a_k(nu) = prod_{j=1..k} (4 nu^2 - (2j-1)^2) / (k! 8^k).
std::vector<double> HankelCoefficients(double nu, int terms, bool alternate) {
  std::vector<double> c{1};
  double a = 1;
  for (int k = 1; k < terms; ++k) {
    a *= (4 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
    c.push_back(alternate && k % 2 ? -a : a);
  }
  return c;
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

/// Where the reference leaves C++17's cyl_bessel_i and cyl_bessel_k: past about 1e6 they throw
/// ("argument too large"), and past 709 exp(-x) I(x) or exp(x) K(x) is a product of 0 and inf.
constexpr double kFarBessel = 500;

/// exp(-x) I_nu(x) (`k` false) or exp(x) K_nu(x) (`k` true) for x >= kFarBessel by the Hankel
/// expansions, 1/sqrt(2 pi x) sum (-1)^k a_k / x^k and sqrt(pi / (2x)) sum a_k / x^k: there
/// the twelfth term is below 1e-27 of the first.
double FarScaledBessel(double x, int nu, bool k) {
  static const std::vector<double> kCoefficients[2][2] = {
      {HankelCoefficients(0, 12, true), HankelCoefficients(0, 12, false)},
      {HankelCoefficients(1, 12, true), HankelCoefficients(1, 12, false)}};
  const std::vector<double>& c = kCoefficients[nu][k];  // (built once, not per element)
  double s = 0;
  for (auto it = c.rbegin(); it != c.rend(); ++it) s = s / x + *it;
  return k ? std::sqrt(M_PI / (2 * x)) * s : s / std::sqrt(2 * M_PI * x);
}

/// I_nu(|x|) (`scaled` false) or exp(-|x|) I_nu(|x|) (`scaled` true), nu = 0 or 1, finite x.
double BesselIOfAbs(double x, int nu, bool scaled) {
  double ax = std::fabs(x);
  if (ax < kFarBessel) {
    double i = std::cyl_bessel_i(static_cast<double>(nu), ax);
    return scaled ? std::exp(-ax) * i : i;
  }
  double half = std::exp(ax / 2);  // exp(ax) in two halves: I0 is finite to 713
  double s = FarScaledBessel(ax, nu, false);
  return scaled ? s : s * half * half;
}
double BesselI0(double x) { return std::isinf(x) ? kInf : BesselIOfAbs(x, 0, false); }
double BesselI0e(double x) {
  if (std::isinf(x)) return 0;
  return std::isnan(x) ? x : BesselIOfAbs(x, 0, true);
}

// --- Hurwitz zeta, polygamma -----------------------------------------------------------

constexpr int kZetaDirect = 10;  // terms summed directly before the Euler-Maclaurin tail

/// B_2j / (2j)! for j = 1..12, from the Bernoulli numbers.
const std::vector<double>& EulerMaclaurinCoefficients() {
  static const std::vector<double> c = [] {
    const double b[] = {1.0 / 6,       -1.0 / 30,       1.0 / 42,         -1.0 / 30,
                        5.0 / 66,      -691.0 / 2730,   7.0 / 6,          -3617.0 / 510,
                        43867.0 / 798, -174611.0 / 330, 854513.0 / 138.0, -236364091.0 / 2730};
    std::vector<double> v;
    for (int j = 1; j <= 12; ++j) v.push_back(b[j - 1] / Factorial(2 * j));
    return v;
  }();
  return c;
}

/// zeta(x, q) = sum_{k>=0} (q + k)^-x for q > 0 (x > 1), as Cephes structures it: the first
/// 10 terms directly, then Euler-Maclaurin from w = q + 10: w^(1-x)/(x-1) + w^-x/2 +
/// sum_j B_2j/(2j)! (x)_{2j-1} w^(-x-2j+1), 12 corrections. Where the direct terms have
/// converged (w^-x below 1e-18 of the sum) the tail is left out: for x much larger than w its
/// corrections grow without bound.
Expr ZetaPositive(const Expr& x, const Expr& q) {
  Expr s = ir::Pow(q, -x);
  for (int k = 1; k < kZetaDirect; ++k) s = s + ir::Pow(q + D(k), -x);
  Expr w = q + D(kZetaDirect);
  const std::vector<double>& c = EulerMaclaurinCoefficients();
  Expr inner = D(c[11]);
  for (int j = 11; j >= 1; --j) {
    inner = D(c[j - 1]) + (x + D(2 * j - 1)) * (x + D(2 * j)) / (w * w) * inner;
  }
  Expr wx = ir::Pow(w, -x);
  Expr tail = wx * (w / (x - D(1)) + D(0.5) + x / w * inner);
  return Select::Make(wx <= D(1e-18) * s, s, s + tail);
}

constexpr int kZetaNegativeShift = 32;

/// Hurwitz zeta as PyTorch's (Cephes') zeta(x, q): +inf at x = 1, NaN below; for q <= 0, +inf
/// at the integers and NaN unless x is an integer, where the sum runs from q as it is: here
/// the first 32 terms directly, then from q + 32 (so q > -32; NaN from -32 down, where the
/// reference agrees by definition).
Expr Zeta(const Expr& xin, const Expr& qin) {
  Expr x = F64(xin), q = F64(qin);
  Expr shifted = ZetaPositive(x, q + D(kZetaNegativeShift));
  for (int k = 0; k < kZetaNegativeShift; ++k) shifted = shifted + ir::Pow(q + D(k), -x);
  Expr r = Select::Make(q > D(0), ZetaPositive(x, q),
                        Select::Make(q > D(-kZetaNegativeShift), shifted, D(kNan)));
  Expr q_pole = q <= D(0) && q == M(MathOp::kFloor, q);
  Expr no_power = q <= D(0) && x != M(MathOp::kFloor, x);
  r = Select::Make(q_pole, D(kInf), Select::Make(no_power, D(kNan), r));
  return Select::Make(x == D(1), D(kInf), Select::Make(x < D(1), D(kNan), r));
}
/// Reference: the first 1000 + ceil(-q) terms directly, then the integral, half a term and
/// two Euler-Maclaurin corrections (riemann_zeta where q = 1), for any q its callers sum from
/// (Zeta: q > -32, Polygamma: q >= kPolygammaDirectSumFrom; poles and NaNs at any q).
double ZetaSum(double x, double q) {
  if (x == 1) return kInf;
  if (x < 1) return kNan;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNan;
  }
  if (std::isnan(x) || std::isnan(q)) return kNan;
  if (q == kInf) return 0;
  if (q == 1 && std::isfinite(x)) return std::riemann_zeta(x);
  const int n = 1000 + static_cast<int>(std::ceil(std::max(0.0, -q)));
  double s = 0;
  for (int k = n - 1; k >= 0; --k) s += std::pow(q + k, -x);
  if (std::isinf(x)) return s;  // the tail is 0
  const double w = q + n;
  return s + std::pow(w, 1 - x) / (x - 1) + 0.5 * std::pow(w, -x) + x / 12 * std::pow(w, -x - 1) -
         x * (x + 1) * (x + 2) / 720 * std::pow(w, -x - 3);
}

/// The op's reference: ZetaSum where the compute sums (q > -32).
double Zeta(double x, double q) {
  const bool summed = q <= -kZetaNegativeShift && x > 1 && x == std::floor(x) && q != std::floor(q);
  return summed ? kNan : ZetaSum(x, q);
}

/// P_n's coefficients, constant term first: d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)), where
/// P_0(c) = c and P_{k+1} = -(1 + c^2) P_k'(c).
std::vector<double> CotDerivative(int n) {
  std::vector<double> p{0, 1};
  for (int k = 0; k < n; ++k) {
    std::vector<double> next(p.size() + 1, 0.0);
    for (size_t i = 1; i < p.size(); ++i) {
      next[i - 1] -= i * p[i];
      next[i + 1] -= i * p[i];
    }
    p = next;
  }
  return p;
}

/// cot(pi x) for the reflection, x reduced exactly to r in [-1/2, 1/2] (x - trunc(x), then
/// +-1): 1 / tan(pi r) up to |r| = 1/4, -tan(pi (r -+ 1/2)) beyond (r -+ 1/2 exact too), so
/// it is 0 at the half-integers. 1 / tan(pi x) gave 6e-17 there, which P_n's linear term
/// carries into psi_n (n even): polygamma(6, -3.5) was off by 2e-9 relative.
double CotPi(double x) {
  double r = x - std::trunc(x);
  r = r > 0.5 ? r - 1 : r < -0.5 ? r + 1 : r;
  if (std::fabs(r) <= 0.25) return 1 / std::tan(M_PI * r);
  return -std::tan(M_PI * (r > 0 ? r - 0.5 : r + 0.5));
}
Expr CotPi(const Expr& x) {
  Expr f = x - M(MathOp::kTrunc, x);
  Expr r = Select::Make(f > D(0.5), f - D(1), Select::Make(f < D(-0.5), f + D(1), f));
  Expr near_pole = D(1) / M(MathOp::kTan, D(M_PI) * r);
  Expr near_zero = D(0) - M(MathOp::kTan, D(M_PI) * Select::Make(r > D(0), r - D(0.5), r + D(0.5)));
  return Select::Make(M(MathOp::kAbs, r) <= D(0.25), near_pole, near_zero);
}

/// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (n = 0 is digamma): zeta for
/// x >= 1/2; below, the reflection psi_n(x) = (-1)^n psi_n(1 - x) - pi d^n/dx^n cot(pi x),
/// the derivative being pi^n P_n(cot(pi x)) with P_0(c) = c, P_{k+1} = -(1 + c^2) P_k'(c)
/// (coefficients made here from n). The edges are PyTorch's: from n = 2 (its zeta) the poles
/// at 0 and the negative integers are (-1)^(n+1) inf and +inf gives NaN; n = 1 (its trigamma)
/// reflects with pi^2 / sin^2(pi x), so that a negative integer gives the huge finite value of
/// sin's rounding as PyTorch does (6.6e32 at -1 in float64, 1.3e15 in float32), and -inf NaN.
Expr Polygamma(int n, const Expr& in) {
  if (n == 0) return Digamma(in);
  Expr x = F64(in);
  const double sign = n % 2 ? 1 : -1;  // (-1)^(n+1)
  Expr neg = x < D(0.5);
  Expr y = Select::Make(neg, D(1) - x, x);
  Expr psi = D(sign * Factorial(n)) * ZetaPositive(D(n + 1), y);
  if (n == 1) {
    // At the poles PyTorch's value is sin's rounding, which its float32 kernel (float16 and
    // bfloat16 included: they arrive here widened to float32) takes at float32's pi.
    const bool f32 = in.type().is_float() && in.type().bits() == 32;
    Expr s = M(MathOp::kSin, D(M_PI) * x);
    // (the float32 product pi * x, as float32 arithmetic rounds it; x is an integer there)
    Expr arg32 = ir::Cast::Make(ir::Float(32), D(static_cast<float>(M_PI)) * x);
    Expr s_pole = f32 ? M(MathOp::kSin, F64(arg32)) : s;
    s = Select::Make(x == M(MathOp::kTrunc, x), s_pole, s);
    return Select::Make(neg, D(M_PI * M_PI) / (s * s) - psi, psi);
  }
  Expr reflected = D(-sign) * psi - D(std::pow(M_PI, n + 1)) * Horner(CotPi(x), CotDerivative(n));
  Expr pole = x <= D(0) && x == M(MathOp::kTrunc, x);
  Expr r = Select::Make(pole, D(sign * kInf), Select::Make(neg, reflected, psi));
  return Select::Make(x == D(kInf), D(kNan), r);
}
/// Below this, the reference reflects: the direct sum from x has 1000 - x terms.
constexpr double kPolygammaDirectSumFrom = -1000;

/// Reference: (-1)^(n+1) n! times the direct sum from x (ZetaSum), with the edges above, and
/// the reflection from 1 - x below kPolygammaDirectSumFrom (a non-integer x there, as the
/// output of a polygamma near its poles, -1.4e10, had 1.4e10 terms, counted in an int);
/// `float32_pole`: a pole's sin taken at float32's pi times x rounded to float32, as for
/// every dtype but float64.
double Polygamma(int n, double x, bool float32_pole = false) {
  if (n == 0) return Digamma(x);
  if (n == 1 && x <= 0 && x == std::floor(x)) {
    const double arg = float32_pole
                           ? static_cast<float>(static_cast<double>(static_cast<float>(M_PI)) * x)
                           : M_PI * x;
    const double s = std::sin(arg);
    return M_PI * M_PI / (s * s) - Polygamma(1, 1 - x);
  }
  if (n > 1 && x == kInf) return kNan;
  const double sign = n % 2 ? 1 : -1;  // (-1)^(n+1)
  if (x < kPolygammaDirectSumFrom && x != std::floor(x)) {
    const std::vector<double> p = CotDerivative(n);
    const double cot = CotPi(x);
    double poly = 0;
    for (auto c = p.rbegin(); c != p.rend(); ++c) poly = poly * cot + *c;
    return -sign * Polygamma(n, 1 - x) - std::pow(M_PI, n + 1) * poly;
  }
  return sign * Factorial(n) * ZetaSum(n + 1.0, x);
}

// --- I1, K0, K1 ------------------------------------------------------------------------

/// sum_k ((x/2)^2)^k / (k! (k + nu)!) up to k = 50: I_nu's power series without its (x/2)^nu.
std::vector<double> BesselISeries(int nu, int terms) {
  std::vector<double> c;
  for (int k = 0; k < terms; ++k) c.push_back(1 / (Factorial(k) * Factorial(k + nu)));
  return c;
}

/// I1 (odd) and exp(-|x|) I1(x), scaled when `scaled`, as BesselI0: the power series up to
/// |x| = 30, the asymptotic series beyond (18 terms); I1(+-inf) = +-inf.
Expr BesselI1(const Expr& in, bool scaled) {
  Expr x = F64(in);
  Expr ax = M(MathOp::kAbs, x);
  Expr series = ax / D(2) * Horner(ax * ax / D(4), BesselISeries(1, 50));
  if (scaled) series = series * ir::Exp(-ax);
  Expr s = Horner(D(1) / ax, HankelCoefficients(1, 18, true));
  Expr pre = D(1) / M(MathOp::kSqrt, D(2 * M_PI) * ax);
  Expr half = ir::Exp(ax / D(2));
  Expr asymptotic = scaled ? s * pre : Select::Make(ax == D(kInf), ax, s * pre * half * half);
  Expr r = Select::Make(ax <= D(30), series, asymptotic);
  return Select::Make(x < D(0), r * D(-1), r);  // (a product keeps -0 at -inf)
}
double BesselI1(double x) {
  if (std::isinf(x)) return x;
  return std::isnan(x) ? x : (x < 0 ? -1 : 1) * BesselIOfAbs(x, 1, false);
}
double BesselI1e(double x) {
  if (std::isinf(x)) return std::copysign(0.0, x);
  return std::isnan(x) ? x : (x < 0 ? -1 : 1) * BesselIOfAbs(x, 1, true);
}

constexpr double kEulerGamma = 0.57721566490153286061;

/// exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt for 2 <= x <= 20, by the
/// trapezoidal rule (step 1/8 to t = 31/8): exact to double for analytic integrands that decay
/// this fast.
Expr ScaledBesselKIntegral(const Expr& x, double nu) {
  const double step = 0.125;
  Expr sum = D(0.5 * step);
  for (int j = 1; j < 32; ++j) {
    double t = j * step;
    sum = sum + D(step * std::cosh(nu * t)) * ir::Exp(D(1 - std::cosh(t)) * x);
  }
  return sum;
}

/// K_nu (nu = 0, 1) and exp(x) K_nu(x) (`scaled`) for x > 0 (+inf at 0, NaN below):
/// - x <= 2: the series K0 = -ln(x/2) I0(x) + sum psi(k+1) q^k / k!^2 and
///   K1 = 1/x + ln(x/2) I1(x) - x/4 sum (psi(k+1) + psi(k+2)) q^k / (k! (k+1)!), q = x^2/4;
/// - 2 < x <= 20: exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the
///   trapezoidal rule (step 1/8 to t = 31/8), exact to double for analytic integrands that
///   decay this fast;
/// - x > 20: the asymptotic series sqrt(pi/(2x)) sum a_k(nu) / x^k (30 terms).
Expr BesselK(const Expr& in, int nu, bool scaled) {
  Expr x = F64(in);
  Expr q = x * x / D(4);
  Expr log_half = ir::Log(x / D(2));
  std::vector<double> psi_sum;  // psi(k+1) (nu = 0) or psi(k+1) + psi(k+2), over the factorials
  double h = 0;
  for (int k = 0; k < 20; ++k) {
    if (k > 0) h += 1.0 / k;
    double psi = h - kEulerGamma;
    double v = nu == 0 ? psi : psi + h + 1.0 / (k + 1) - kEulerGamma;
    psi_sum.push_back(v / (Factorial(k) * Factorial(k + nu)));
  }
  Expr series = nu == 0 ? D(0) - log_half * Horner(q, BesselISeries(0, 20)) + Horner(q, psi_sum)
                        : D(1) / x + log_half * (x / D(2)) * Horner(q, BesselISeries(1, 20)) -
                              x / D(4) * Horner(q, psi_sum);
  Expr trapezoid = ScaledBesselKIntegral(x, nu);
  Expr asymptotic =
      M(MathOp::kSqrt, D(M_PI / 2) / x) * Horner(D(1) / x, HankelCoefficients(nu, 30, false));
  Expr far = Select::Make(x <= D(20), trapezoid, asymptotic);
  Expr r = scaled ? Select::Make(x <= D(2), series * ir::Exp(x), far)
                  : Select::Make(x <= D(2), series, far * ir::Exp(-x));
  return Select::Make(x == D(0), D(kInf), Select::Make(x < D(0), D(kNan), r));
}
double BesselK(double x, int nu, bool scaled) {
  if (std::isnan(x) || x < 0) return kNan;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0;
  if (x >= kFarBessel) {
    double half = std::exp(-x / 2);  // (K underflows gradually, through the subnormals)
    double s = FarScaledBessel(x, nu, true);
    return scaled ? s : s * half * half;
  }
  double k = std::cyl_bessel_k(static_cast<double>(nu), x);
  return scaled ? std::exp(x) * k : k;
}

// --- J0, J1, Y0, Y1 --------------------------------------------------------------------

constexpr int kBesselJPanels = 64;  // trapezoidal panels on [0, pi]

/// sum_k c_k J_{m_k}(x) for x up to 25, from J_m(x) = (1/pi) int_0^pi cos(m t - x sin t) dt
/// by the trapezoidal rule with 64 panels (for periodic integrands it errs by J_{m +- 128}(x),
/// below 1e-19 for m <= 61): cos(m t - x sin t) splits into cos(m t) cos(x sin t) +
/// sin(m t) sin(x sin t), so the sum is fixed weights on cos(x s_j) and sin(x s_j), s_j =
/// sin(j pi / 64), the nodes j and 64 - j sharing theirs.
Expr BesselJCombination(const Expr& x, const std::vector<std::pair<int, double>>& terms) {
  const int n = kBesselJPanels;
  std::vector<double> a(n / 2 + 1, 0.0), b(n / 2 + 1, 0.0);
  for (int j = 0; j <= n; ++j) {
    const double t = j * M_PI / n, w = (j == 0 || j == n ? 0.5 : 1.0) / n;
    const int node = std::min(j, n - j);
    for (const auto& [m, c] : terms) {
      a[node] += w * c * std::cos(m * t);
      b[node] += w * c * std::sin(m * t);
    }
  }
  Expr sum = D(a[0]);
  for (int j = 1; j <= n / 2; ++j) {
    Expr arg = x * D(std::sin(j * M_PI / n));
    sum = sum + D(a[j]) * M(MathOp::kCos, arg) + D(b[j]) * M(MathOp::kSin, arg);
  }
  return sum;
}

/// The Hankel expansion for x > 25: J_nu = sqrt(2/(pi x)) (P cos chi - Q sin chi), Y_nu =
/// sqrt(2/(pi x)) (P sin chi + Q cos chi), chi = x - (nu/2 + 1/4) pi, P and Q the even and odd
/// terms of sum (-1)^k a_k(nu) / x^k (40 terms); cos chi and sin chi from cos x and sin x, so
/// that no multiple of pi is subtracted from a large x in floating point.
Expr BesselHankel(const Expr& x, int nu, bool y) {
  std::vector<double> a = HankelCoefficients(nu, 40, false), p, qc;
  for (size_t k = 0; k < a.size(); ++k) {
    double v = (k / 2) % 2 ? -a[k] : a[k];  // (-1)^floor(k/2): P's and Q's alternation
    (k % 2 ? qc : p).push_back(v);
  }
  Expr z2 = D(1) / (x * x);
  Expr pp = Horner(z2, p), qq = Horner(z2, qc) / x;
  Expr c = M(MathOp::kCos, x), s = M(MathOp::kSin, x);
  // nu = 0: chi = x - pi/4; nu = 1: chi = x - 3 pi/4.
  Expr cos_chi = nu == 0 ? (c + s) * D(M_SQRT1_2) : (s - c) * D(M_SQRT1_2);
  Expr sin_chi = nu == 0 ? (s - c) * D(M_SQRT1_2) : (D(0) - s - c) * D(M_SQRT1_2);
  Expr f = M(MathOp::kSqrt, D(2 / M_PI) / x);
  return y ? f * (pp * sin_chi + qq * cos_chi) : f * (pp * cos_chi - qq * sin_chi);
}

/// J0 (even) and J1 (odd): the trapezoidal integral up to |x| = 25 (J1's power series below
/// |x| = 1, where the integral's absolute error would be a large relative one), Hankel beyond.
Expr BesselJ(const Expr& in, int nu) {
  Expr x = F64(in);
  Expr ax = M(MathOp::kAbs, x);
  Expr near = BesselJCombination(ax, {{nu, 1.0}});
  if (nu == 1) {
    std::vector<double> c;
    for (int k = 0; k < 12; ++k) c.push_back((k % 2 ? -1 : 1) / (Factorial(k) * Factorial(k + 1)));
    near = Select::Make(ax < D(1), ax / D(2) * Horner(ax * ax / D(4), c), near);
  }
  Expr r = Select::Make(ax <= D(25), near, BesselHankel(ax, nu, false));
  if (nu == 0) return r;
  // x's sign, -0 included (a product keeps the sign of zero, 0 - r would not).
  return Select::Make(ir::MathCall(MathOp::kCopysign, {D(1), x}) < D(0), r * D(-1), r);
}
/// Y0 and Y1 for x > 0 (-inf at 0, NaN below): Neumann's series on the J integral up to 25,
/// Y0 = 2/pi ((ln(x/2) + gamma) J0 - 2 sum_k (-1)^k J_2k / k) and its derivative
/// Y1 = 2/pi (-J0/x + (ln(x/2) + gamma) J1 + sum_k (-1)^k (J_{2k-1} - J_{2k+1}) / k), k to 30;
/// Hankel beyond.
Expr BesselY(const Expr& in, int nu) {
  Expr x = F64(in);
  std::vector<std::pair<int, double>> neumann;
  for (int k = 1; k <= 30; ++k) {
    double c = (k % 2 ? -1.0 : 1.0) / k;
    if (nu == 0) {
      neumann.push_back({2 * k, -2 * c});
    } else {
      neumann.push_back({2 * k - 1, c});
      neumann.push_back({2 * k + 1, -c});
    }
  }
  Expr log_term = ir::Log(x / D(2)) + D(kEulerGamma);
  Expr near = log_term * BesselJCombination(x, {{nu, 1.0}}) + BesselJCombination(x, neumann);
  if (nu == 1) near = near - BesselJCombination(x, {{0, 1.0}}) / x;
  near = D(2 / M_PI) * near;
  Expr r = Select::Make(x <= D(25), near, BesselHankel(x, nu, true));
  return Select::Make(x == D(0), D(-kInf), Select::Make(x < D(0), D(kNan), r));
}

/// Where the reference leaves C++17's cyl_bessel_j and cyl_neumann: past 1000 libstdc++ takes
/// the Hankel expansion at the phase x - (nu/2 + 1/4) pi subtracted in floating point (as
/// PyTorch's CPU kernels do), wrong by the rounding of x: the whole amplitude past about 1e16.
constexpr double kFarBesselJ = 1000;

/// J_nu(x) (`y` false) or Y_nu(x) (`y` true), nu 0 or 1, for x >= kFarBesselJ: the Hankel
/// expansion sqrt(2/(pi x)) (P cos chi - Q sin chi), or (P sin chi + Q cos chi), P and Q the
/// even and odd terms of sum (-1)^floor(k/2) a_k / x^k to 12 terms (the last below 1e-29 of the
/// first), cos chi and sin chi from std::cos(x) and std::sin(x), which libm reduces exactly
/// (the compiled code's route as well: tests/hlir/reference_ops_test.cc holds it to mpmath).
double FarBesselJY(double x, int nu, bool y) {
  static const std::vector<double> kCoefficients[2] = {HankelCoefficients(0, 12, false),
                                                       HankelCoefficients(1, 12, false)};
  const std::vector<double>& a = kCoefficients[nu];  // (built once, not per element)
  const double z = 1 / (x * x);
  double p = 0, q = 0;
  for (int k = static_cast<int>(a.size()) - 2; k >= 0; k -= 2) {
    p = p * z + ((k / 2) % 2 ? -a[k] : a[k]);
    q = q * z + ((k / 2) % 2 ? -a[k + 1] : a[k + 1]);
  }
  q /= x;
  const double c = std::cos(x), s = std::sin(x);
  // nu = 0: chi = x - pi/4; nu = 1: chi = x - 3 pi/4.
  const double cos_chi = (nu == 0 ? c + s : s - c) * M_SQRT1_2;
  const double sin_chi = (nu == 0 ? s - c : -s - c) * M_SQRT1_2;
  const double f = std::sqrt(2 / (M_PI * x));
  return y ? f * (p * sin_chi + q * cos_chi) : f * (p * cos_chi - q * sin_chi);
}

double BesselJ(double x, int nu) {
  if (std::isnan(x) || std::isinf(x)) return kNan;
  const double ax = std::fabs(x);
  double j = ax < kFarBesselJ ? std::cyl_bessel_j(static_cast<double>(nu), ax)
                              : FarBesselJY(ax, nu, false);
  return nu == 1 && std::signbit(x) ? -j : j;
}
double BesselY(double x, int nu) {
  if (std::isnan(x) || x < 0 || std::isinf(x)) return kNan;
  if (x == 0) return -kInf;
  return x < kFarBesselJ ? std::cyl_neumann(static_cast<double>(nu), x) : FarBesselJY(x, nu, true);
}

/// sin(x) / x, 1 at 0 and 0 at +-inf.
Expr SphericalBesselJ0(const Expr& in) {
  Expr x = F64(in);
  Expr r = Select::Make(x == D(0), D(1), M(MathOp::kSin, x) / x);
  return Select::Make(M(MathOp::kAbs, x) == D(kInf), D(0), r);
}
/// (Not C++17's sph_bessel(0, x): it is NaN below about 1e-300 and throws past about 2e4.)
double SphericalBesselJ0(double x) {
  if (std::isinf(x)) return 0;
  return x == 0 ? 1 : std::sin(x) / x;
}

// --- igamma, igammac -------------------------------------------------------------------

constexpr int kIgammaTerms = 200;

/// The regularized incomplete gammas P(a, x) (igamma) and Q(a, x) = 1 - P (igammac), with
/// PyTorch's edges (NaN for a < 0 or x < 0, and at a = x = 0 and a = x = inf; P = 1 at a = 0
/// or x = inf, 0 at x = 0 or a = inf). Where x < a + 1 the series
/// P = x^a e^-x / Gamma(a+1) (1 + x/(a+1) (1 + x/(a+2) (1 + ...))), 200 terms, else the
/// continued fraction Q = x^a e^-x / Gamma(a) / (x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...))),
/// 200 levels evaluated from the bottom; the other one is 1 minus it. Accurate for a up to about
/// 500 (PyTorch switches to an asymptotic expansion for large a).
Expr IncompleteGamma(const Expr& ain, const Expr& xin, bool upper) {
  Expr a = F64(ain), x = F64(xin);
  Expr series = D(1);
  for (int k = kIgammaTerms; k >= 1; --k) series = D(1) + x / (a + D(k)) * series;
  Expr p = ir::Exp(a * ir::Log(x) - x - M(MathOp::kLgamma, a + D(1))) * series;
  Expr cf = x + D(2 * kIgammaTerms + 1) - a;
  for (int i = kIgammaTerms; i >= 1; --i) cf = x + D(2 * i - 1) - a - D(i) * (D(i) - a) / cf;
  Expr q = ir::Exp(a * ir::Log(x) - x - M(MathOp::kLgamma, a)) / cf;
  Expr use_series = x < a + D(1);
  Expr r = upper ? Select::Make(use_series, D(1) - p, q) : Select::Make(use_series, p, D(1) - q);
  const double one = upper ? 0 : 1, zero = upper ? 1 : 0;  // P's 1 and 0 as this side has them
  // PyTorch's cascade of edge cases, the first that applies deciding.
  Expr x_inf = x == D(kInf);
  r = Select::Make(x_inf, D(one), r);
  r = Select::Make(a == D(kInf), Select::Make(x_inf, D(kNan), D(zero)), r);
  r = Select::Make(x == D(0), D(zero), r);
  r = Select::Make(a == D(0), Select::Make(x > D(0), D(one), D(kNan)), r);
  return Select::Make(a < D(0) || x < D(0), D(kNan), r);
}
/// Reference: the series alone in long double, summed until it converges, for every x.
double IncompleteGamma(double a, double x, bool upper) {
  if (a < 0 || x < 0) return kNan;
  double p;
  if (a == 0) {
    p = x > 0 ? 1 : kNan;
  } else if (x == 0) {
    p = 0;
  } else if (std::isinf(a)) {
    p = std::isinf(x) ? kNan : 0;
  } else if (std::isinf(x)) {
    p = 1;
  } else if (std::isnan(a) || std::isnan(x)) {
    p = kNan;
  } else {
    long double term = 1, sum = 1;
    for (int k = 1; k < 1000000 && term > sum * 1e-22L; ++k) {
      term *= x / (a + k);
      sum += term;
    }
    p = static_cast<double>(
        std::exp(static_cast<long double>(a) * std::log(static_cast<long double>(x)) - x -
                 std::lgamma(static_cast<long double>(a) + 1)) *
        sum);
  }
  return upper ? 1 - p : p;
}
double Igamma(double a, double x) { return IncompleteGamma(a, x, false); }
double Igammac(double a, double x) { return IncompleteGamma(a, x, true); }

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

// --- frexp, nextafter ------------------------------------------------------------------

/// floor(log2 |x|) exactly, for finite nonzero x of any float type (computed in float64):
/// log2 rounded may land on the wrong side of a power of two, so it is corrected by exp2.
Expr ExponentOf(const Expr& ax) {
  Expr e = M(MathOp::kFloor, M(MathOp::kLog2, ax));
  return Select::Make(ax < M(MathOp::kExp2, e), e - D(1),
                      Select::Make(ax >= M(MathOp::kExp2, e + D(1)), e + D(1), e));
}

/// frexp's exponent (an integer, here in the operand's float type) and mantissa in [0.5, 1):
/// x = mantissa * 2^exponent; 0, +-inf and NaN give themselves and exponent 0. The mantissa
/// scales by two powers of two, so that neither over- nor underflows.
Expr FrexpExponent(const Expr& in) {
  Expr x = F64(in), ax = M(MathOp::kAbs, x);
  Expr special = ax == D(0) || ax == D(kInf) || ax != ax;
  return Select::Make(special, D(0), ExponentOf(ax) + D(1));
}
Expr FrexpMantissa(const Expr& in) {
  Expr x = F64(in);
  Expr e = FrexpExponent(in);
  Expr half = M(MathOp::kTrunc, e / D(2));
  return x * M(MathOp::kExp2, D(0) - half) * M(MathOp::kExp2, half - e);
}
double FrexpExponent(double x) {
  int e = 0;
  if (!std::isfinite(x)) return 0;
  std::frexp(x, &e);
  return e;
}
double FrexpMantissa(double x) {
  int e = 0;
  return std::isfinite(x) ? std::frexp(x, &e) : x;
}

/// A float format for nextafter: significand bits (the leading one included), the exponent of
/// the least normal power of two, the greatest finite value.
struct FloatFormat {
  int digits, min_exponent;
  double max;
};
FloatFormat FormatOf(DType t) {
  switch (t) {
    case DType::kFloat16:
      return {11, -14, 65504.0};
    case DType::kBFloat16:
      return {8, -126, 3.3895313892515355e38};
    case DType::kFloat32:
      return {24, -126, std::numeric_limits<float>::max()};
    default:
      return {53, -1022, std::numeric_limits<double>::max()};
  }
}

/// nextafter in the operand's own format (the widened value of a float16 steps by a float16
/// unit): the step away from zero is 2^(e - digits + 1) for |x| in [2^e, 2^(e+1)), at least the
/// least subnormal; toward zero from a power of two it is half that. Exact in float64.
Expr NextAfter(const Expr& xin, const Expr& yin, const FloatFormat& f) {
  Expr x = F64(xin), y = F64(yin), ax = M(MathOp::kAbs, x);
  const double least = std::ldexp(1.0, f.min_exponent - f.digits + 1);
  Expr e = ExponentOf(ax);
  Expr away_step = M(MathOp::kExp2, ir::max(e - D(f.digits - 1), D(std::log2(least))));
  Expr toward_step =
      Select::Make(ax == M(MathOp::kExp2, e),
                   M(MathOp::kExp2, ir::max(e - D(f.digits), D(std::log2(least)))), away_step);
  Expr up = y > x;
  Expr step = Select::Make(up == (x > D(0)), away_step, toward_step);
  Expr r = Select::Make(up, x + step, x - step);
  r = Select::Make(ax == D(kInf), ir::MathCall(MathOp::kCopysign, {D(f.max), x}), r);
  r = Select::Make(x == D(0), Select::Make(up, D(least), D(-least)), r);
  return Select::Make(x != x || y != y, x + y, Select::Make(x == y, y, r));
}
double NextAfter(double x, double y, DType t) {
  if (t == DType::kFloat64) return std::nextafter(x, y);
  if (t == DType::kFloat32) {
    return std::nextafterf(static_cast<float>(x), static_cast<float>(y));
  }
  // float16, bfloat16: from frexp's exponent.
  const FloatFormat f = FormatOf(t);
  if (std::isnan(x) || std::isnan(y)) return x + y;
  if (x == y) return y;
  const double least = std::ldexp(1.0, f.min_exponent - f.digits + 1);
  if (x == 0) return y > 0 ? least : -least;
  if (std::isinf(x)) return std::copysign(f.max, x);
  int e = 0;
  std::frexp(x, &e);
  const int lead = std::max(e - 1, f.min_exponent);
  double ulp = std::ldexp(1.0, lead - f.digits + 1);
  const bool away = (y > x) == (x > 0);
  if (!away && std::fabs(x) == std::ldexp(1.0, e - 1) && e - 1 > f.min_exponent) ulp /= 2;
  return y > x ? x + ulp : x - ulp;
}
absl::StatusOr<Binary> MakeNextAfter(const AttributeMap&, const std::string&, DType t) {
  const FloatFormat f = FormatOf(t);
  return Binary{[t](double x, double y) { return NextAfter(x, y, t); },
                [f](const Expr& x, const Expr& y) { return NextAfter(x, y, f); }};
}

// --- orthogonal polynomials of a tensor degree ------------------------------------------

/// The degree as PyTorch reads it: n truncated to an integer; a negative or non-finite one
/// gives 0 (its int64 conversion is negative on x86). Returns whether the polynomial is 0.
Expr DegreeIsNegative(const Expr& n) { return !(n >= D(0) && n < D(kInf)); }
Expr IsOdd(const Expr& n) { return n - D(2) * M(MathOp::kFloor, n / D(2)) == D(1); }

constexpr int kPolynomialMaxDegree = 127;  // the quadratures below are exact up to here

/// `r` with PyTorch's values at an infinite x, those of its recurrence: p_1 (`first`) at n = 1,
/// +inf at n = 2, NaN from n = 3 (inf - inf); then 1 at n = 0 and 0 at a negative degree.
Expr PolynomialEdges(const Expr& x, const Expr& n, const Expr& first, Expr r) {
  Expr at_inf = Select::Make(n == D(1), first, Select::Make(n == D(2), D(kInf), D(kNan)));
  r = Select::Make(M(MathOp::kAbs, x) == D(kInf), at_inf, r);
  return Select::Make(DegreeIsNegative(n), D(0), Select::Make(n == D(0), D(1), r));
}

/// T_n(x): cos(n acos x) on [-1, 1], (+-1)^n cosh(n acosh |x|) outside; 1 at n = 0 and
/// (+-1)^n at x = +-1 exactly.
Expr ChebyshevT(const Expr& xin, const Expr& nin) {
  Expr x = F64(xin), n = M(MathOp::kTrunc, F64(nin));
  Expr ax = M(MathOp::kAbs, x);
  Expr odd_sign = Select::Make(x < D(0) && IsOdd(n), D(-1), D(1));
  Expr inside = M(MathOp::kCos, n * M(MathOp::kAcos, x));
  Expr outside = odd_sign * M(MathOp::kCosh, n * M(MathOp::kAcosh, ax));
  Expr r = Select::Make(ax == D(1), odd_sign, Select::Make(ax < D(1), inside, outside));
  return PolynomialEdges(x, n, x, r);
}

/// P_n(x) by Laplace's integral (1/pi) int_0^pi (x + sqrt(x^2 - 1) cos t)^n dt on |x|, the
/// trapezoidal rule with 64 panels being exact for n <= 127 (the integrand is a trigonometric
/// polynomial of degree n; NaN above): inside [-1, 1] the real part rho^n cos(n alpha) of the
/// complex power, the nodes t and pi - t sharing it; (-1)^n for negative x.
Expr LegendreP(const Expr& xin, const Expr& nin) {
  Expr x = F64(xin), n = M(MathOp::kTrunc, F64(nin));
  Expr ax = M(MathOp::kAbs, x);
  const int panels = 64;
  Expr s_in = M(MathOp::kSqrt, ir::max(D(1) - ax * ax, D(0)));
  Expr s_out = M(MathOp::kSqrt, ir::max(ax * ax - D(1), D(0)));
  Expr inside = D(0), outside = D(0);
  for (int j = 0; j <= panels; ++j) {
    const double c = std::cos(j * M_PI / panels), w = (j == 0 || j == panels ? 0.5 : 1.0) / panels;
    outside = outside + D(w) * ir::Pow(ax + s_out * D(c), n);
    if (2 * j > panels) continue;
    const double wf = 2 * j == panels ? w : 2 * w;  // t and pi - t
    Expr im = s_in * D(c);
    Expr rho2 = ax * ax + im * im;
    inside = inside + D(wf) * ir::Pow(rho2, n / D(2)) *
                          M(MathOp::kCos, n * ir::MathCall(MathOp::kAtan2, {im, ax}));
  }
  Expr odd_sign = Select::Make(x < D(0) && IsOdd(n), D(-1), D(1));
  Expr r = odd_sign * Select::Make(ax < D(1), inside, outside);
  r = Select::Make(ax == D(1), odd_sign, r);
  r = Select::Make(n > D(kPolynomialMaxDegree), D(kNan), r);
  return PolynomialEdges(x, n, x, r);
}

/// The 64-point Gauss-Hermite rule (weight exp(-t^2)): its 32 positive nodes and weights, from
/// the orthonormal recurrence (sign changes on a grid, then bisection; weights the reciprocal
/// of sum p_k(t)^2).
const std::vector<std::pair<double, double>>& GaussHermite64() {
  static const std::vector<std::pair<double, double>> rule = [] {
    const int k_nodes = 64;
    auto orthonormal = [&](double t, double* sum_sq) {
      double prev = 0, cur = std::pow(M_PI, -0.25), sq = 0;
      for (int k = 0; k < k_nodes; ++k) {
        sq += cur * cur;
        double next = t * std::sqrt(2.0 / (k + 1)) * cur - std::sqrt(double(k) / (k + 1)) * prev;
        prev = cur;
        cur = next;
      }
      if (sum_sq) *sum_sq = sq;
      return cur;  // p_64(t)
    };
    std::vector<std::pair<double, double>> out;
    const double step = 1e-3;
    for (double a = step / 2; out.size() < k_nodes / 2 && a < 20; a += step) {
      double lo = a, hi = a + step;
      if ((orthonormal(lo, nullptr) < 0) == (orthonormal(hi, nullptr) < 0)) continue;
      for (int i = 0; i < 100; ++i) {
        double mid = 0.5 * (lo + hi);
        ((orthonormal(lo, nullptr) < 0) == (orthonormal(mid, nullptr) < 0) ? lo : hi) = mid;
      }
      double t = 0.5 * (lo + hi), sq = 0;
      orthonormal(t, &sq);
      out.push_back({t, 1 / sq});
    }
    CHECK_EQ(out.size(), static_cast<size_t>(k_nodes / 2)) << "Gauss-Hermite nodes not all found";
    return out;
  }();
  return rule;
}

/// H_n(x) = 2^n / sqrt(pi) int (x + i t)^n exp(-t^2) dt, whose real part the 64-point
/// Gauss-Hermite rule integrates exactly for n <= 127 (NaN above): pairs of nodes +-t give
/// 2 w (x^2 + t^2)^(n/2) cos(n atan2(t, x)); odd n at x = 0 is exactly 0.
Expr HermiteHOf(const Expr& x, const Expr& n) {
  Expr sum = D(0);
  for (const auto& [t, w] : GaussHermite64()) {
    sum = sum + D(2 * w) * ir::Pow(x * x + D(t * t), n / D(2)) *
                    M(MathOp::kCos, n * ir::MathCall(MathOp::kAtan2, {D(t), x}));
  }
  Expr r = M(MathOp::kExp2, n) * D(1 / std::sqrt(M_PI)) * sum;
  r = Select::Make(x == D(0) && IsOdd(n), D(0), r);
  return Select::Make(n > D(kPolynomialMaxDegree), D(kNan), r);
}
Expr HermiteH(const Expr& xin, const Expr& nin) {
  Expr x = F64(xin), n = M(MathOp::kTrunc, F64(nin));
  return PolynomialEdges(x, n, D(2) * x, HermiteHOf(x, n));
}
/// He_n(x) = 2^(-n/2) H_n(x / sqrt 2).
Expr HermiteHe(const Expr& xin, const Expr& nin) {
  Expr x = F64(xin), n = M(MathOp::kTrunc, F64(nin));
  Expr r = M(MathOp::kExp2, D(0) - n / D(2)) * HermiteHOf(x * D(M_SQRT1_2), n);
  return PolynomialEdges(x, n, x, r);
}

constexpr int kLaguerrePoints = 256;

/// L_n(x) = sum_k C(n, k) (-x)^k / k! for n <= 127 (NaN above), from `quadrature` (x > 0):
/// - x < 0: that sum by Horner's rule, every term positive;
/// - x > 0: `quadrature`, LaguerreTerm summed over its points.
Expr LaguerreL(const Expr& x, const Expr& n, const Expr& quadrature) {
  Expr below = D(1);
  for (int k = kPolynomialMaxDegree - 1; k >= 0; --k) {
    below = D(1) +
            ir::max(n - D(k), D(0)) * M(MathOp::kAbs, x) * D(1.0 / ((k + 1.0) * (k + 1.0))) * below;
  }
  Expr v = Select::Make(x > D(0), quadrature,
                        Select::Make(x < D(0), below, Select::Make(x == D(0), D(1), x)));
  v = Select::Make(n > D(kPolynomialMaxDegree), D(kNan), v);
  return PolynomialEdges(x, n, D(1) - x, v);
}

/// Point `j` (0 to kLaguerrePoints / 2) of the quadrature of L_n(x), x > 0: the constant term of
/// (1 + 1/u)^n exp(-x u) by the trapezoidal rule with kLaguerrePoints points on the circle
/// |u| = r through the integrand's saddle points, r = sqrt(n/x) up to x = 4n (complex saddles),
/// the nearer real saddle 2n/x / (1 + sqrt(1 - 4n/x)) beyond; the points j and
/// kLaguerrePoints - j share a term. On that circle the integrand is no larger than the value's
/// envelope exp(x/2), so the sum does not cancel (on the unit circle it reached 2^n: L_67(0.9)
/// was off by 600), and the terms it aliases with are below double's precision for
/// |x| <= 300 (checked against 60-digit values).
Expr LaguerreTerm(const Expr& x, const Expr& n, const Expr& j) {
  const int points = kLaguerrePoints;
  Expr jf = F64(j);
  Expr h = D(2 * M_PI / points) * jf;
  Expr c = M(MathOp::kCos, h), s = M(MathOp::kSin, h);
  Expr w = Select::Make(jf == D(0) || jf == D(points / 2), D(1.0 / points), D(2.0 / points));
  Expr m = ir::max(n, D(1));
  Expr r = Select::Make(x <= D(4) * m, M(MathOp::kSqrt, m / x),
                        D(2) * m / x / (D(1) + M(MathOp::kSqrt, D(1) - D(4) * m / x)));
  Expr re = D(1) + c / r, im = D(0) - s / r;  // 1 + 1/u at u = r exp(i h)
  Expr log_modulus = D(0.5) * ir::Log(re * re + im * im);
  Expr angle = ir::MathCall(MathOp::kAtan2, {im, re});
  Expr term = w * ir::Exp(n * log_modulus - x * r * c) * M(MathOp::kCos, n * angle - x * r * s);
  return Select::Make(x > D(0), term, D(0));  // (r is NaN below 0)
}

/// laguerre_polynomial_l's compute: the quadrature is a reduction over its points, a loop in
/// the kernel (unrolled, the 129 terms of log, atan2, exp and cos made a 2 MB PTX kernel that
/// ptxas took minutes to compile), then LaguerreL elementwise.
absl::StatusOr<std::vector<ir::Tensor>> ComputeLaguerreL(const std::vector<ir::Tensor>& in,
                                                         const AttributeMap&,
                                                         const std::vector<ComputeOutput>& outs,
                                                         const std::string& name) {
  auto operands = [&](const Indices& i) {
    return std::pair{F64(Widen(BroadcastRead(in[0], i))),
                     M(MathOp::kTrunc, F64(Widen(BroadcastRead(in[1], i))))};
  };
  ir::IterVar j = ir::ReduceAxis(ir::Expr(kLaguerrePoints / 2 + 1), "j");
  ir::Tensor quadrature = ir::Compute(
      outs[0].shape,
      [&](const Indices& i) {
        auto [x, n] = operands(i);
        return ir::ReduceSum(LaguerreTerm(x, n, j.var), {j});
      },
      name + "_quadrature");
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape,
      [&](const Indices& i) {
        auto [x, n] = operands(i);
        return CastTo(outs[0].type, LaguerreL(x, n, quadrature(i)));
      },
      name)};
}

/// cosh(a) / s or sinh(a) / s (`f`) for a >= 0, overflowing only where the quotient does: from
/// a = 700 on, where exp(-a) is below double's precision, exp(a - ln s - ln 2) (`log_s` is ln s).
Expr HyperbolicOver(MathOp f, const Expr& a, const Expr& s, const Expr& log_s) {
  return Select::Make(a < D(700), M(f, a) / s, ir::Exp(a - log_s - D(M_LN2)));
}

/// Chebyshev's U, V and W (kind 'U', 'V', 'W') at y: with theta = acos y inside [-1, 1],
/// U = sin((n+1) theta) / sin theta, V = cos((n+1/2) theta) / cos(theta/2),
/// W = sin((n+1/2) theta) / sin(theta/2), the denominators as sqrt((1-y)(1+y)), sqrt((1+y)/2),
/// sqrt((1-y)/2) (exact near +-1); the same with sinh and cosh of acosh y above 1; below -1,
/// U_n(y) = (-1)^n U_n(-y), V_n(y) = (-1)^n W_n(-y), W_n(y) = (-1)^n V_n(-y); PyTorch's values
/// at y = +-1.
Expr ChebyshevUVW(const Expr& y, const Expr& n, char kind) {
  Expr ay = M(MathOp::kAbs, y);
  Expr sign = Select::Make(y < D(0) && IsOdd(n), D(-1), D(1));
  Expr theta = M(MathOp::kAcos, y);
  Expr one_minus = D(1) - y, one_plus = D(1) + y;
  Expr t = M(MathOp::kAcosh, ay);  // outside, on |y|
  Expr inside, outside, at_one, at_minus_one;
  if (kind == 'U') {
    inside = M(MathOp::kSin, (n + D(1)) * theta) / M(MathOp::kSqrt, one_minus * one_plus);
    Expr log_s = D(0.5) * (ir::Log(ay - D(1)) + ir::Log(ay + D(1)));
    outside =
        HyperbolicOver(MathOp::kSinh, (n + D(1)) * t, M(MathOp::kSqrt, ay * ay - D(1)), log_s);
    at_one = n + D(1);
    at_minus_one = sign * (n + D(1));
  } else {
    Expr v_in = M(MathOp::kCos, (n + D(0.5)) * theta) / M(MathOp::kSqrt, one_plus / D(2));
    Expr w_in = M(MathOp::kSin, (n + D(0.5)) * theta) / M(MathOp::kSqrt, one_minus / D(2));
    Expr v_half = (ay + D(1)) / D(2), w_half = (ay - D(1)) / D(2);
    Expr v_out = HyperbolicOver(MathOp::kCosh, (n + D(0.5)) * t, M(MathOp::kSqrt, v_half),
                                D(0.5) * ir::Log(v_half));
    Expr w_out = HyperbolicOver(MathOp::kSinh, (n + D(0.5)) * t, M(MathOp::kSqrt, w_half),
                                D(0.5) * ir::Log(w_half));
    const bool v = kind == 'V';
    inside = v ? v_in : w_in;
    // Below -1 the other kind at |y|.
    outside = Select::Make(y < D(0), v ? w_out : v_out, v ? v_out : w_out);
    at_one = v ? D(1) : D(2) * n + D(1);
    at_minus_one = sign * (v ? D(2) * n + D(1) : D(1));
  }
  Expr r = Select::Make(ay < D(1), inside, sign * outside);
  return Select::Make(y == D(1), at_one, Select::Make(y == D(-1), at_minus_one, r));
}
Expr ChebyshevU(const Expr& xin, const Expr& nin) {
  Expr x = F64(xin), n = M(MathOp::kTrunc, F64(nin));
  return PolynomialEdges(x, n, D(2) * x, ChebyshevUVW(x, n, 'U'));
}
Expr ChebyshevV(const Expr& xin, const Expr& nin) {
  Expr x = F64(xin), n = M(MathOp::kTrunc, F64(nin));
  return PolynomialEdges(x, n, D(2) * x - D(1), ChebyshevUVW(x, n, 'V'));
}
Expr ChebyshevW(const Expr& xin, const Expr& nin) {
  Expr x = F64(xin), n = M(MathOp::kTrunc, F64(nin));
  return PolynomialEdges(x, n, D(2) * x + D(1), ChebyshevUVW(x, n, 'W'));
}
/// The shifted polynomials: the same at y = 2x - 1 (x + x - 1, rounded as PyTorch rounds it).
Expr ShiftedChebyshevT(const Expr& x, const Expr& n) {
  return ChebyshevT(F64(x) + F64(x) - D(1), n);
}
Expr ShiftedChebyshevU(const Expr& x, const Expr& n) {
  return ChebyshevU(F64(x) + F64(x) - D(1), n);
}
Expr ShiftedChebyshevV(const Expr& x, const Expr& n) {
  return ChebyshevV(F64(x) + F64(x) - D(1), n);
}
Expr ShiftedChebyshevW(const Expr& x, const Expr& n) {
  return ChebyshevW(F64(x) + F64(x) - D(1), n);
}

/// References: the three-term recurrences, run n times as PyTorch does (n truncated; negative
/// or non-finite n gives 0), in long double so that no intermediate overflows before the value
/// does. `max_degree` is where the compute stops (NaN above): the quadrature polynomials stop at
/// 127, the Chebyshev ones (closed forms) have no limit. A recurrence that has turned NaN stays
/// NaN, so it stops there.
template <typename Step>
double ByRecurrence(double x, double nd, double p0, double p1, Step step,
                    int64_t max_degree = kPolynomialMaxDegree) {
  nd = std::trunc(nd);
  if (!(nd >= 0 && nd < kInf)) return 0;
  if (nd == 0) return 1;
  if (nd > static_cast<double>(max_degree)) return kNan;
  const int64_t n = static_cast<int64_t>(nd);
  long double prev = p0, cur = p1;
  for (int64_t k = 1; k < n && !std::isnan(cur); ++k) {
    long double next = step(k, cur, prev);
    prev = cur;
    cur = next;
  }
  return static_cast<double>(cur);
}
constexpr int64_t kNoDegreeLimit = int64_t{1} << 62;
/// Chebyshev's T, U, V, W (p_1 = `p1`): p_n = 2 x p_(n-1) - p_(n-2). Outside [-1, 1] they grow
/// as exp(n acosh |x|), positive above 1 and of sign (-1)^n below -1; where the value passes
/// double's range it is that signed infinity (the compute's closed forms round so), not the NaN
/// of PyTorch's recurrence, which overflows and then takes inf - inf. At an infinite x the
/// recurrence's own values (PolynomialEdges).
double ChebyshevBy(double x, double nd, double p1) {
  double r = ByRecurrence(
      x, nd, 1, p1, [x](int64_t, long double c, long double p) { return 2 * x * c - p; },
      kNoDegreeLimit);
  if (std::isfinite(x) && std::isnan(r) && std::abs(x) > 1) {
    return x < 0 && std::fmod(std::trunc(nd), 2) == 1 ? -kInf : kInf;  // past long double's range
  }
  return r;
}
double ChebyshevT(double x, double n) { return ChebyshevBy(x, n, x); }
double ChebyshevU(double x, double n) { return ChebyshevBy(x, n, 2 * x); }
double ChebyshevV(double x, double n) { return ChebyshevBy(x, n, 2 * x - 1); }
double ChebyshevW(double x, double n) { return ChebyshevBy(x, n, 2 * x + 1); }
double ShiftedChebyshevT(double x, double n) { return ChebyshevT(x + x - 1, n); }
double ShiftedChebyshevU(double x, double n) { return ChebyshevU(x + x - 1, n); }
double ShiftedChebyshevV(double x, double n) { return ChebyshevV(x + x - 1, n); }
double ShiftedChebyshevW(double x, double n) { return ChebyshevW(x + x - 1, n); }
double LegendreP(double x, double n) {
  return ByRecurrence(x, n, 1, x, [x](int64_t k, long double c, long double p) {
    return ((2 * k + 1) * x * c - k * p) / (k + 1);
  });
}
double HermiteH(double x, double n) {
  return ByRecurrence(x, n, 1, 2 * x, [x](int64_t k, long double c, long double p) {
    return 2 * x * c - 2 * k * p;
  });
}
double HermiteHe(double x, double n) {
  return ByRecurrence(x, n, 1, x,
                      [x](int64_t k, long double c, long double p) { return x * c - k * p; });
}
double LaguerreL(double x, double n) {
  return ByRecurrence(x, n, 1, 1 - x, [x](int64_t k, long double c, long double p) {
    return ((2 * k + 1 - x) * c - k * p) / (k + 1);
  });
}

// --- Airy Ai ---------------------------------------------------------------------------

/// Ai(x): for -7 <= x <= 2.08 Maclaurin's series Ai(0) f(x) + Ai'(0) g(x), f and g power
/// series in x^3 (30 terms); beyond 2.08 (zeta = 2/3 x^(3/2) >= 2)
/// Ai(x) = sqrt(x/3) / pi K_1/3(zeta), K by its trapezoidal integral up to zeta = 20 and the
/// asymptotic series beyond; below -7 the oscillatory expansion
/// Ai(-x) = (cos(zeta - pi/4) P - ... ) / (sqrt(pi) x^(1/4)) with
/// u_k = Gamma(3k + 1/2) / (54^k k! Gamma(k + 1/2)) (15 terms each); NaN at +-inf as PyTorch's.
Expr AiryAi(const Expr& in) {
  Expr x = F64(in);
  const double ai0 = 0.355028053887817239, dai0 = -0.258819403792806798;
  std::vector<double> f{1}, g{1};
  for (int k = 1; k < 30; ++k) {
    f.push_back(f.back() / ((3.0 * k) * (3.0 * k - 1)));
    g.push_back(g.back() / ((3.0 * k + 1) * (3.0 * k)));
  }
  Expr x3 = x * x * x;
  Expr maclaurin = D(ai0) * Horner(x3, f) + D(dai0) * x * Horner(x3, g);
  Expr ax = M(MathOp::kAbs, x);
  Expr zeta = D(2.0 / 3) * ax * M(MathOp::kSqrt, ax);
  Expr k_scaled = Select::Make(zeta <= D(20), ScaledBesselKIntegral(zeta, 1.0 / 3),
                               M(MathOp::kSqrt, D(M_PI / 2) / zeta) *
                                   Horner(D(1) / zeta, HankelCoefficients(1.0 / 3, 30, false)));
  Expr decaying = M(MathOp::kSqrt, ax / D(3)) / D(M_PI) * ir::Exp(D(0) - zeta) * k_scaled;
  std::vector<double> u{1}, p, q;
  for (int k = 1; k < 30; ++k) {
    u.push_back(u.back() * (6.0 * k - 1) * (6.0 * k - 3) * (6.0 * k - 5) /
                (216.0 * k * (2 * k - 1)));
  }
  for (int k = 0; k < 30; ++k) {
    double v = (k / 2) % 2 ? -u[k] : u[k];  // (-1)^floor(k/2)
    (k % 2 ? q : p).push_back(v);
  }
  Expr z2 = D(1) / (zeta * zeta);
  Expr pp = Horner(z2, p), qq = Horner(z2, q) / zeta;
  Expr c = M(MathOp::kCos, zeta), s = M(MathOp::kSin, zeta);
  Expr oscillating = (pp * (c + s) + qq * (s - c)) * D(M_SQRT1_2) /
                     (D(std::sqrt(M_PI)) * M(MathOp::kSqrt, M(MathOp::kSqrt, ax)));
  Expr r = Select::Make(x < D(-7), oscillating,
                        Select::Make(zeta < D(2) || x < D(0), maclaurin, decaying));
  return Select::Make(ax == D(kInf), D(kNan), r);
}
/// Reference: libstdc++'s __gnu_cxx::airy_ai on [-100, 110]. Below, where airy_ai loses digits
/// (4e-10 at -300) and past -1000 throws (after undefined behaviour near -1e29),
/// Ai(-x) = sqrt(x)/3 (3/2 J_1/3(z) - sqrt(3)/2 Y_1/3(z)), z = 2/3 x^(3/2), by C++17's Bessel
/// functions; above, 0 (Ai underflows double from 107.7; airy_ai throws past 1e5). Within
/// 1e-3 of 0, Maclaurin's series to x^4 (its next term is 1e-20 of Ai there): airy_ai lost
/// digits below 1e-56 (1e-14), was NaN below -1e-190, threw near +-1e-205 and was inf below
/// 1e-299 (found by fuzz_compile_run).
double AiryAi(double x) {
  if (std::isinf(x)) return kNan;
  if (std::fabs(x) < 1e-3) {
    const double ai0 = 0.355028053887817239, dai0 = -0.258819403792806798;  // Ai(0), Ai'(0)
    const double x3 = x * x * x;
    return ai0 * (1 + x3 / 6) + dai0 * (x + x3 * x / 12);
  }
  if (std::isnan(x) || (x >= -100 && x <= 110)) return __gnu_cxx::airy_ai(x);
  if (x > 110) return 0;
  const double ax = -x, z = 2.0 / 3 * ax * std::sqrt(ax);
  if (std::isinf(z)) return kNan;  // as the compute's cos(inf)
  return std::sqrt(ax) / 3 *
         (1.5 * std::cyl_bessel_j(1.0 / 3, z) - std::sqrt(3.0) / 2 * std::cyl_neumann(1.0 / 3, z));
}

absl::StatusOr<Unary> MakePolygamma(const AttributeMap& attrs, const std::string& op) {
  auto n = GetInt(attrs, "n", op);
  if (!n.ok()) return n.status();
  if (*n < 0 || *n > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": attribute 'n' is ", *n, ", expected an order in [0, 100]"));
  }
  const int order = static_cast<int>(*n);
  return Unary{[order](double x) { return Polygamma(order, x); },
               [order](const Expr& x) { return Polygamma(order, x); },
               [order](double x, DType t) { return Polygamma(order, x, t != DType::kFloat64); }};
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
  RegisterUnary(r, "polygamma", kF, same, MakePolygamma);
  RegisterBinary(r, "zeta", kF, same, true, Zeta, Zeta);
  RegisterUnary(r, "i1", kF, same, BesselI1, [](X x) { return BesselI1(x, false); });
  RegisterUnary(r, "i1e", kF, same, BesselI1e, [](X x) { return BesselI1(x, true); });
  RegisterUnary(
      r, "bessel_k0", kF, same, [](double x) { return BesselK(x, 0, false); },
      [](X x) { return BesselK(x, 0, false); });
  RegisterUnary(
      r, "bessel_k1", kF, same, [](double x) { return BesselK(x, 1, false); },
      [](X x) { return BesselK(x, 1, false); });
  RegisterUnary(
      r, "bessel_k0e", kF, same, [](double x) { return BesselK(x, 0, true); },
      [](X x) { return BesselK(x, 0, true); });
  RegisterUnary(
      r, "bessel_k1e", kF, same, [](double x) { return BesselK(x, 1, true); },
      [](X x) { return BesselK(x, 1, true); });
  RegisterUnary(
      r, "bessel_j0", kF, same, [](double x) { return BesselJ(x, 0); },
      [](X x) { return BesselJ(x, 0); });
  RegisterUnary(
      r, "bessel_j1", kF, same, [](double x) { return BesselJ(x, 1); },
      [](X x) { return BesselJ(x, 1); });
  RegisterUnary(
      r, "bessel_y0", kF, same, [](double x) { return BesselY(x, 0); },
      [](X x) { return BesselY(x, 0); });
  RegisterUnary(
      r, "bessel_y1", kF, same, [](double x) { return BesselY(x, 1); },
      [](X x) { return BesselY(x, 1); });
  RegisterUnary(r, "spherical_bessel_j0", kF, same, SphericalBesselJ0, SphericalBesselJ0);
  RegisterBinary(r, "igamma", kF, same, true, Igamma,
                 [](X a, X x) { return IncompleteGamma(a, x, false); });
  RegisterBinary(r, "igammac", kF, same, true, Igammac,
                 [](X a, X x) { return IncompleteGamma(a, x, true); });
  RegisterUnary(r, "ndtri", kF, same, Ndtri, Ndtri);
  RegisterUnary(r, "airy_ai", kF, same, AiryAi, AiryAi);
  RegisterUnary(r, "frexp_mantissa", kF, same, FrexpMantissa, FrexpMantissa);
  RegisterUnary(r, "frexp_exponent", kF, same, FrexpExponent, FrexpExponent);
  RegisterBinary(r, "nextafter", kF, same, true, MakeNextAfter);
  RegisterBinary(r, "chebyshev_polynomial_t", kF, same, true, ChebyshevT, ChebyshevT);
  RegisterBinary(r, "legendre_polynomial_p", kF, same, true, LegendreP, LegendreP);
  RegisterBinary(r, "hermite_polynomial_h", kF, same, true, HermiteH, HermiteH);
  RegisterBinary(r, "hermite_polynomial_he", kF, same, true, HermiteHe, HermiteHe);
  OpDef laguerre =
      BinaryOpDef("laguerre_polynomial_l", kF, same, true,
                  [](const AttributeMap&, const std::string&, DType) -> absl::StatusOr<Binary> {
                    return Binary{[](double x, double n) { return LaguerreL(x, n); }, nullptr};
                  });
  laguerre.pattern = OpPattern::kOpaque;  // a reduction inside
  laguerre.compute = ComputeLaguerreL;
  r.Register(std::move(laguerre));
  RegisterBinary(r, "chebyshev_polynomial_u", kF, same, true, ChebyshevU, ChebyshevU);
  RegisterBinary(r, "chebyshev_polynomial_v", kF, same, true, ChebyshevV, ChebyshevV);
  RegisterBinary(r, "chebyshev_polynomial_w", kF, same, true, ChebyshevW, ChebyshevW);
  RegisterBinary(r, "shifted_chebyshev_polynomial_t", kF, same, true, ShiftedChebyshevT,
                 ShiftedChebyshevT);
  RegisterBinary(r, "shifted_chebyshev_polynomial_u", kF, same, true, ShiftedChebyshevU,
                 ShiftedChebyshevU);
  RegisterBinary(r, "shifted_chebyshev_polynomial_v", kF, same, true, ShiftedChebyshevV,
                 ShiftedChebyshevV);
  RegisterBinary(r, "shifted_chebyshev_polynomial_w", kF, same, true, ShiftedChebyshevW,
                 ShiftedChebyshevW);
}

}  // namespace cinn_like::hlir::ops
