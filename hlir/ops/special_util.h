/// \file What the special functions' files share (special_functions.h), in their namespace
/// `special`: the IR names they use, float64 constants and expressions, the series helpers.
#pragma once

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "hlir/ops/compute_util.h"
#include "hlir/ops/elementwise_def.h"
#include "ir/math.h"

namespace cinn_like::hlir::ops::special {

using ir::Expr;
using ir::MathOp;
using ir::Select;

/// A special function's op: floating-point operands (of one dtype, where two), its result of
/// theirs; the other arguments are RegisterUnary's and RegisterBinary's (elementwise_def.h).
inline void FloatUnary(OpRegistry& r, const std::string& name, UnaryMaker make) {
  RegisterUnary(r, name, DTypeClass::kFloat, OutDType::kSame, std::move(make));
}
inline void FloatUnary(OpRegistry& r, const std::string& name, double (*reference)(double),
                       Expr (*lang)(const Expr&)) {
  RegisterUnary(r, name, DTypeClass::kFloat, OutDType::kSame, reference, lang);
}
inline void FloatBinary(OpRegistry& r, const std::string& name, BinaryMaker make) {
  RegisterBinary(r, name, DTypeClass::kFloat, OutDType::kSame, /*same_dtype=*/true,
                 std::move(make));
}
inline void FloatBinary(OpRegistry& r, const std::string& name, double (*reference)(double, double),
                        Expr (*lang)(const Expr&, const Expr&)) {
  RegisterBinary(r, name, DTypeClass::kFloat, OutDType::kSame, /*same_dtype=*/true, reference,
                 lang);
}

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// The math call `op` of x, a float64 constant, x cast to float64.
inline Expr M(MathOp op, Expr x) { return ir::MathCall(op, {std::move(x)}); }
inline Expr D(double v) { return Const(ir::Float(64), v); }
inline Expr F64(const Expr& x) { return ir::Cast::Make(ir::Float(64), x); }

/// sum_k c[k] z^k by Horner's rule. Expressions are trees (a subexpression used twice is
/// computed twice), so every series of these files is written with constant coefficients or from
/// its last term inwards: each step uses the previous one once, and the tree grows linearly.
inline Expr Horner(const Expr& z, const std::vector<double>& c) {
  Expr p = D(c.back());
  for (int k = static_cast<int>(c.size()) - 2; k >= 0; --k) p = p * z + D(c[k]);
  return p;
}

inline double Factorial(int n) { return std::tgamma(n + 1.0); }

/// The coefficients c[k] = (-1)^k a_k(nu) (alternate) or a_k(nu) of the Hankel expansions in
/// 1/x, a_k(nu) = prod_{j=1..k} (4 nu^2 - (2j-1)^2) / (k! 8^k).
inline std::vector<double> HankelCoefficients(double nu, int terms, bool alternate) {
  std::vector<double> c{1};
  double a = 1;
  for (int k = 1; k < terms; ++k) {
    a *= (4 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
    c.push_back(alternate && k % 2 ? -a : a);
  }
  return c;
}

}  // namespace cinn_like::hlir::ops::special
