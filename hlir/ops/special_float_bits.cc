/// \file The bit-level float functions: frexp (as a mantissa and an exponent) and nextafter
/// (special_functions.h).
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

}  // namespace

void RegisterFloatBitOps(OpRegistry& r) {
  FloatUnary(r, "frexp_mantissa", FrexpMantissa, FrexpMantissa);
  FloatUnary(r, "frexp_exponent", FrexpExponent, FrexpExponent);
  FloatBinary(r, "nextafter", MakeNextAfter);
}

}  // namespace cinn_like::hlir::ops::special
