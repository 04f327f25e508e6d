/// \file Special functions of the gamma family: digamma, polygamma, the Hurwitz zeta and the
/// regularized incomplete gammas (special_functions.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlir/ops/elementwise_def.h"
#include "hlir/ops/special_functions.h"
#include "hlir/ops/special_util.h"

namespace cinn_like::hlir::ops::special {
namespace {

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

void RegisterGammaFunctionOps(OpRegistry& r) {
  using X = const Expr&;
  FloatUnary(r, "digamma", Digamma, Digamma);
  FloatUnary(r, "polygamma", MakePolygamma);
  FloatBinary(r, "zeta", Zeta, Zeta);
  FloatBinary(r, "igamma", Igamma, [](X a, X x) { return IncompleteGamma(a, x, false); });
  FloatBinary(r, "igammac", Igammac, [](X a, X x) { return IncompleteGamma(a, x, true); });
}

}  // namespace cinn_like::hlir::ops::special
