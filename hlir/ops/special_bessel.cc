/// \file Bessel functions: I0, I1 and their scaled forms, K0, K1 and theirs, J0, J1, Y0, Y1,
/// the spherical j0, and the Airy function Ai (special_functions.h).
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

}  // namespace

void RegisterBesselFunctionOps(OpRegistry& r) {
  using X = const Expr&;
  FloatUnary(r, "i0", BesselI0, [](X x) { return BesselI0(x, false); });
  FloatUnary(r, "i0e", BesselI0e, [](X x) { return BesselI0(x, true); });
  FloatUnary(r, "i1", BesselI1, [](X x) { return BesselI1(x, false); });
  FloatUnary(r, "i1e", BesselI1e, [](X x) { return BesselI1(x, true); });
  FloatUnary(
      r, "bessel_k0", [](double x) { return BesselK(x, 0, false); },
      [](X x) { return BesselK(x, 0, false); });
  FloatUnary(
      r, "bessel_k1", [](double x) { return BesselK(x, 1, false); },
      [](X x) { return BesselK(x, 1, false); });
  FloatUnary(
      r, "bessel_k0e", [](double x) { return BesselK(x, 0, true); },
      [](X x) { return BesselK(x, 0, true); });
  FloatUnary(
      r, "bessel_k1e", [](double x) { return BesselK(x, 1, true); },
      [](X x) { return BesselK(x, 1, true); });
  FloatUnary(
      r, "bessel_j0", [](double x) { return BesselJ(x, 0); }, [](X x) { return BesselJ(x, 0); });
  FloatUnary(
      r, "bessel_j1", [](double x) { return BesselJ(x, 1); }, [](X x) { return BesselJ(x, 1); });
  FloatUnary(
      r, "bessel_y0", [](double x) { return BesselY(x, 0); }, [](X x) { return BesselY(x, 0); });
  FloatUnary(
      r, "bessel_y1", [](double x) { return BesselY(x, 1); }, [](X x) { return BesselY(x, 1); });
  FloatUnary(r, "spherical_bessel_j0", SphericalBesselJ0, SphericalBesselJ0);
  FloatUnary(r, "airy_ai", AiryAi, AiryAi);
}

}  // namespace cinn_like::hlir::ops::special
