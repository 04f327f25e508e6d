/// \file Orthogonal polynomials of a tensor degree: Chebyshev (T, U, V, W and their shifted
/// forms), Legendre, Hermite (H, He) and Laguerre (special_functions.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "hlir/ops/elementwise_def.h"
#include "hlir/ops/special_functions.h"
#include "hlir/ops/special_util.h"

#include <glog/logging.h>

namespace cinn_like::hlir::ops::special {
namespace {

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

}  // namespace

void RegisterPolynomialOps(OpRegistry& r) {
  FloatBinary(r, "chebyshev_polynomial_t", ChebyshevT, ChebyshevT);
  FloatBinary(r, "legendre_polynomial_p", LegendreP, LegendreP);
  FloatBinary(r, "hermite_polynomial_h", HermiteH, HermiteH);
  FloatBinary(r, "hermite_polynomial_he", HermiteHe, HermiteHe);
  OpDef laguerre =
      BinaryOpDef("laguerre_polynomial_l", DTypeClass::kFloat, OutDType::kSame, true,
                  [](const AttributeMap&, const std::string&, DType) -> absl::StatusOr<Binary> {
                    return Binary{[](double x, double n) { return LaguerreL(x, n); }, nullptr};
                  });
  laguerre.pattern = OpPattern::kOpaque;  // a reduction inside
  laguerre.compute = ComputeLaguerreL;
  r.Register(std::move(laguerre));
  FloatBinary(r, "chebyshev_polynomial_u", ChebyshevU, ChebyshevU);
  FloatBinary(r, "chebyshev_polynomial_v", ChebyshevV, ChebyshevV);
  FloatBinary(r, "chebyshev_polynomial_w", ChebyshevW, ChebyshevW);
  FloatBinary(r, "shifted_chebyshev_polynomial_t", ShiftedChebyshevT, ShiftedChebyshevT);
  FloatBinary(r, "shifted_chebyshev_polynomial_u", ShiftedChebyshevU, ShiftedChebyshevU);
  FloatBinary(r, "shifted_chebyshev_polynomial_v", ShiftedChebyshevV, ShiftedChebyshevV);
  FloatBinary(r, "shifted_chebyshev_polynomial_w", ShiftedChebyshevW, ShiftedChebyshevW);
}

}  // namespace cinn_like::hlir::ops::special
