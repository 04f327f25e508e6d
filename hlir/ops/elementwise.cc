/// \file Elementwise and broadcast ops: unary math, activations, casts, binary arithmetic,
/// comparisons, logic and where. Semantics follow PyTorch (and numpy broadcasting); each op's
/// comment says where a choice was made.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/elementwise_def.h"
#include "hlir/ops/op_util.h"
#include "ir/math.h"

namespace cinn_like::hlir {
namespace {

using ir::Expr;
using ir::MathOp;
using ir::Select;
using ops::Binary;
using ops::DTypeClass;
using ops::IsNan;
using ops::OutDType;
using ops::RegisterBinary;
using ops::RegisterUnary;
using ops::ToBool;
using ops::Unary;
using ops::WithDType;

Expr M(MathOp op, Expr x) { return ir::MathCall(op, {std::move(x)}); }
Expr C(const Expr& like, double v) { return ops::Const(like.type(), v); }

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
Expr Sigmoid(const Expr& x) { return C(x, 1) / (C(x, 1) + ir::Exp(-x)); }
/// Sigmoid where the output is float16 or bfloat16: exp and the reciprocal approximate
/// (ir/math.h), within 2^-15 of the value before its rounding.
Expr Sigmoid16(const Expr& x) { return ir::FastRecip(C(x, 1) + ir::FastExp(-x)); }

absl::StatusOr<Unary> MakeSigmoid(const AttributeMap&, const std::string&) {
  return Unary{[](double x) { return Sigmoid(x); }, [](const Expr& x) { return Sigmoid(x); },
               nullptr, Sigmoid16};
}

/// silu: x * sigmoid(x).
absl::StatusOr<Unary> MakeSilu(const AttributeMap&, const std::string&) {
  return Unary{[](double x) { return x * Sigmoid(x); },
               [](const Expr& x) { return x * Sigmoid(x); }, nullptr,
               [](const Expr& x) { return x * Sigmoid16(x); }};
}

absl::StatusOr<Unary> MakeLeakyRelu(const AttributeMap& attrs, const std::string& op) {
  auto slope = GetFloat(attrs, "negative_slope", op, 0.01);
  if (!slope.ok()) return slope.status();
  double a = *slope;
  return Unary{[a](double x) { return x >= 0 ? x : a * x; },
               [a](const Expr& x) { return Select::Make(x >= C(x, 0), x, C(x, a) * x); }};
}

/// gelu: approximate "none" is x * Phi(x) with erf; "tanh" is PyTorch's tanh approximation.
absl::StatusOr<Unary> MakeGelu(const AttributeMap& attrs, const std::string& op) {
  auto approx = GetString(attrs, "approximate", op, "none");
  if (!approx.ok()) return approx.status();
  if (*approx == "none") {
    return Unary{
        [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); },
        [](const Expr& x) { return C(x, 0.5) * x * (C(x, 1) + ir::Erf(x * C(x, M_SQRT1_2))); }};
  }
  if (*approx == "tanh") {
    // PyTorch's 0.5 x (1 + tanh(u)), u = k (x + 0.044715 x^3), computed as x / (1 + e^(-2u)):
    // one exp and a division instead of tanh, and no cancellation where tanh(u) nears -1 (the
    // tanh form loses digits from x = -3 and all of them below -5 in float32, from -6 and below
    // -7 even in float64, where the value is still a normal bfloat16).
    const double k = std::sqrt(2.0 / M_PI);
    auto minus_2u = [k](const Expr& x) {
      return x * (C(x, -2 * k) + C(x, -2 * k * 0.044715) * x * x);
    };
    return Unary{
        [k](double x) { return x / (1.0 + std::exp(-2 * k * (x + 0.044715 * x * x * x))); },
        [minus_2u](const Expr& x) { return x / (C(x, 1) + ir::Exp(minus_2u(x))); }, nullptr,
        [minus_2u](const Expr& x) {
          return x * ir::FastRecip(C(x, 1) + ir::FastExp(minus_2u(x)));
        }};
  }
  return absl::InvalidArgumentError(absl::StrCat("op ", op, ": attribute 'approximate' is \"",
                                                 *approx, "\", expected \"none\" or \"tanh\""));
}

/// softplus with PyTorch's beta (default 1) and threshold (default 20, linear above it).
absl::StatusOr<Unary> MakeSoftplus(const AttributeMap& attrs, const std::string& op) {
  auto beta = GetFloat(attrs, "beta", op, 1.0);
  if (!beta.ok()) return beta.status();
  auto threshold = GetFloat(attrs, "threshold", op, 20.0);
  if (!threshold.ok()) return threshold.status();
  double b = *beta, t = *threshold;
  // log(1 + exp(bx)) as max(bx, 0) + log1p(exp(-|bx|)): exp never overflows (with a threshold
  // of inf, exp(483) was inf in float32 where the value is 483).
  return Unary{[b, t](double x) {
                 double bx = b * x;
                 return bx > t ? x : (std::max(bx, 0.0) + std::log1p(std::exp(-std::fabs(bx)))) / b;
               },
               [b, t](const Expr& x) {
                 Expr bx = C(x, b) * x;
                 Expr log1p_exp = ir::max(bx, C(x, 0)) +
                                  M(MathOp::kLog1p, ir::Exp(C(x, 0) - M(MathOp::kAbs, bx)));
                 return Select::Make(bx > C(x, t), x, log1p_exp / C(x, b));
               }};
}

/// clip to [min, max]; either bound may be absent (no bound on that side), neither may be NaN
/// (an error: PyTorch's result would be NaN everywhere, which frontends write as a fill).
/// Integers compute in float64 and convert back, as the interpreter rounds.
absl::StatusOr<Unary> MakeClip(const AttributeMap& attrs, const std::string& op) {
  const double inf = std::numeric_limits<double>::infinity();
  auto lo = GetFloat(attrs, "min", op, -inf);
  if (!lo.ok()) return lo.status();
  auto hi = GetFloat(attrs, "max", op, inf);
  if (!hi.ok()) return hi.status();
  double a = *lo, b = *hi;
  if (std::isnan(a) || std::isnan(b)) {  // PyTorch's clamp gives NaN everywhere then
    return absl::InvalidArgumentError(absl::StrCat(
        "op ", op, ": attribute '", std::isnan(a) ? "min" : "max",
        "' is NaN; clamp with a NaN bound is NaN everywhere (write a fill of NaN instead)"));
  }
  return Unary{[a, b](double x) { return std::isnan(x) ? x : std::min(std::max(x, a), b); },
               [a, b, inf](const Expr& x) {
                 const bool flt = x.type().is_float();
                 Expr v = flt ? x : ir::Cast::Make(ir::Float(64), x);
                 Expr r = v;
                 // Only the absent bounds (-inf below, +inf above) are no-ops: min = +inf or
                 // max = -inf (PyTorch's min > max gives max) still apply.
                 if (a != -inf) r = Select::Make(r < C(v, a), C(v, a), r);
                 if (b != inf) r = Select::Make(r > C(v, b), C(v, b), r);
                 return flt ? Select::Make(IsNan(x), x, r) : r;
               }};
}

/// elu as aten.elu: x * scale where x > 0, else alpha * scale * expm1(x * input_scale) (selu
/// and celu are elu with other constants).
absl::StatusOr<Unary> MakeElu(const AttributeMap& attrs, const std::string& op) {
  auto alpha = GetFloat(attrs, "alpha", op, 1.0);
  if (!alpha.ok()) return alpha.status();
  auto scale = GetFloat(attrs, "scale", op, 1.0);
  if (!scale.ok()) return scale.status();
  auto input_scale = GetFloat(attrs, "input_scale", op, 1.0);
  if (!input_scale.ok()) return input_scale.status();
  double a = *alpha * *scale, s = *scale, is = *input_scale;
  return Unary{[a, s, is](double x) { return x > 0 ? x * s : a * std::expm1(x * is); },
               [a, s, is](const Expr& x) {
                 return Select::Make(x > C(x, 0), x * C(x, s),
                                     C(x, a) * M(MathOp::kExpm1, x * C(x, is)));
               }};
}

/// isinf: +-infinity (never for integers); signbit: the sign bit, so -0.0 and negative NaNs
/// count (integers: x < 0).
Expr IsInf(const Expr& x) {
  if (!x.type().is_float()) return ir::MakeConst(ir::Bool(), 0);
  return M(MathOp::kAbs, x) == C(x, INFINITY);
}
Expr SignBit(const Expr& x) {
  if (!x.type().is_float()) return x < C(x, 0);
  return ir::MathCall(MathOp::kCopysign, {C(x, 1), x}) < C(x, 0);
}

/// trunc of floats; integers are their own.
Expr Trunc(const Expr& x) { return x.type().is_float() ? M(MathOp::kTrunc, x) : x; }

/// The divisor that generated code divides by: 1 where `b` is 0 or, for signed integers, -1
/// (INT_MIN / -1 and INT_MIN % -1 trap on x86); the callers give those quotients their values.
Expr SafeDivisor(const Expr& b) {
  Expr bad = b == C(b, 0);
  if (b.type().is_int()) bad = bad || b == C(b, -1);
  return Select::Make(bad, C(b, 1), b);
}

/// -a wrapping modulo 2^bits (INT_MIN stays INT_MIN, as PyTorch's integer ops): negated in the
/// unsigned type, where overflow is defined in C and CUDA C too.
Expr WrappingNeg(const Expr& a) {
  ir::Type u = ir::UInt(a.type().bits(), a.type().lanes());
  return ir::Cast::Make(a.type(), ir::MakeConst(u, 0) - ir::Cast::Make(u, a));
}

/// fmod: C's fmod (the sign of the dividend), as torch.fmod. Integers: 0 where b is 0 (PyTorch
/// raises; generated code must not trap) and where b is -1 (x % -1 is 0; INT_MIN % -1 traps).
double Fmod(double a, double b) { return std::fmod(a, b); }
Expr Fmod(const Expr& a, const Expr& b) {
  if (a.type().is_float()) return ir::MathCall(MathOp::kFmod, {a, b});
  return a % SafeDivisor(b);
}

/// fmax / fmin ignore a NaN operand (NaN only when both are), as torch.fmax / torch.fmin.
Expr Fmax(const Expr& a, const Expr& b) {
  return a.type().is_float() ? ir::MathCall(MathOp::kFmax, {a, b}) : ir::max(a, b);
}
Expr Fmin(const Expr& a, const Expr& b) {
  return a.type().is_float() ? ir::MathCall(MathOp::kFmin, {a, b}) : ir::min(a, b);
}

/// Integer a / b rounded as `mode` says ("trunc" or "floor"); 0 where b is 0; -a (wrapping)
/// where b is -1.
Expr IntDiv(const Expr& a, const Expr& b, const std::string& mode) {
  Expr zero = C(b, 0);
  Expr safe = SafeDivisor(b);
  Expr q = a / safe;
  if (mode == "floor" && a.type().is_int()) {
    Expr r = a % safe;
    q = Select::Make(r != zero && ((r < zero) != (safe < zero)), q - C(q, 1), q);
  }
  if (a.type().is_int()) q = Select::Make(b == C(b, -1), WrappingNeg(a), q);
  return Select::Make(b == zero, zero, q);
}

/// div: PyTorch's rounding_mode: absent or "" is true division (float dtypes only); "trunc"
/// rounds toward zero, "floor" toward negative infinity. Integer division by zero: the
/// interpreter stores 0 (PyTorch raises; generated code must not trap either).
absl::StatusOr<Binary> MakeDiv(const AttributeMap& attrs, const std::string& op, DType t) {
  auto mode = GetString(attrs, "rounding_mode", op, "");
  if (!mode.ok()) return mode.status();
  if (mode->empty() && !IsFloat(t)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op ", op, ": true division of ", DTypeName(t),
        " tensors needs a float dtype; cast first or set rounding_mode \"trunc\" or \"floor\""));
  }
  std::string m = *mode;
  auto lang = [m](const Expr& a, const Expr& b) {
    if (!a.type().is_float()) return IntDiv(a, b, m);
    if (m.empty()) return a / b;
    return M(m == "trunc" ? MathOp::kTrunc : MathOp::kFloor, a / b);
  };
  if (m.empty()) return Binary{[](double a, double b) { return a / b; }, lang};
  if (m == "trunc") return Binary{[](double a, double b) { return std::trunc(a / b); }, lang};
  if (m == "floor") return Binary{[](double a, double b) { return std::floor(a / b); }, lang};
  return absl::InvalidArgumentError(absl::StrCat("op ", op, ": attribute 'rounding_mode' is \"", m,
                                                 "\", expected \"\", \"trunc\" or \"floor\""));
}

/// mod: Python's and PyTorch's remainder (the sign of the divisor), not C's fmod; 0 for
/// integers where b is 0.
double Remainder(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
Expr Remainder(const Expr& a, const Expr& b) {
  Expr zero = C(b, 0);
  if (a.type().is_float()) {  // fmod, then moved to the divisor's sign
    Expr r = a % b;
    return Select::Make(r != zero && ((r < zero) != (b < zero)), r + b, r);
  }
  Expr safe = SafeDivisor(b);  // x mod -1 is 0, as x mod 1
  Expr r = a % safe;
  if (a.type().is_int()) {
    r = Select::Make(r != zero && ((r < zero) != (safe < zero)), r + safe, r);
  }
  return Select::Make(b == zero, zero, r);
}

/// maximum / minimum propagate NaN, as PyTorch does (the IR's max and min are IEEE maxNum /
/// minNum).
double Maximum(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double Minimum(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }
Expr PropagateNan(const Expr& a, const Expr& b, const Expr& m) {
  if (!a.type().is_float()) return m;
  return Select::Make(IsNan(a), a, Select::Make(IsNan(b), b, m));
}
Expr Maximum(const Expr& a, const Expr& b) { return PropagateNan(a, b, ir::max(a, b)); }
Expr Minimum(const Expr& a, const Expr& b) { return PropagateNan(a, b, ir::min(a, b)); }

/// pow of integers computes in float64 and converts back, as the interpreter rounds.
Expr Pow(const Expr& a, const Expr& b) {
  if (a.type().is_float()) return ir::Pow(a, b);
  return ir::Pow(ir::Cast::Make(ir::Float(64), a), ir::Cast::Make(ir::Float(64), b));
}

/// floor, ceil and round (half to even, as torch.round and numpy.round) of floats; integers
/// are their own.
Expr Floor(const Expr& x) { return x.type().is_float() ? M(MathOp::kFloor, x) : x; }
Expr Ceil(const Expr& x) { return x.type().is_float() ? M(MathOp::kCeil, x) : x; }
Expr Round(const Expr& x) { return x.type().is_float() ? M(MathOp::kRint, x) : x; }

Expr Sign(const Expr& x) {
  Expr s = Select::Make(x > C(x, 0), C(x, 1), Select::Make(x < C(x, 0), C(x, -1), C(x, 0)));
  return x.type().is_float() ? Select::Make(IsNan(x), x, s) : s;
}

void RegisterCast(OpRegistry& r) {
  OpDef def;
  def.name = "cast";
  def.pattern = OpPattern::kElementwise;
  def.compute = ops::CastCompute();
  def.infer = [](const std::vector<TensorDesc>& in,
                 const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    auto name = GetString(attrs, "dtype", "cast");
    if (!name.ok()) return name.status();
    auto t = ParseDType(*name);
    if (!t.ok()) return absl::InvalidArgumentError("op cast: " + std::string(t.status().message()));
    return std::vector<TensorDesc>{WithDType(in[0], *t)};
  };
  // The interpreter's rounding to the output dtype is the cast itself.
  def.reference = [](const std::vector<const HostTensor*>& in, const AttributeMap&,
                     std::vector<HostTensor>& outs) {
    outs[0].data = in[0]->data;
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

void RegisterWhere(OpRegistry& r) {
  OpDef def;
  def.name = "where";
  def.pattern = OpPattern::kBroadcast;
  def.min_inputs = def.max_inputs = 3;
  def.compute = ops::WhereCompute();
  def.infer = [](const std::vector<TensorDesc>& in,
                 const AttributeMap&) -> absl::StatusOr<std::vector<TensorDesc>> {
    if (in[0].dtype != DType::kBool) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op where: input 0 (condition: ", in[0].ToString(), ") must have dtype bool"));
    }
    absl::Status s = ops::CheckSameDType("where", {in[1], in[2]});
    if (!s.ok()) return s;
    auto shape = ops::BroadcastAll("where", in);
    if (!shape.ok()) return shape.status();
    return std::vector<TensorDesc>{TensorDesc{in[1].dtype, *shape}};
  };
  def.reference = [](const std::vector<const HostTensor*>& in, const AttributeMap&,
                     std::vector<HostTensor>& outs) {
    HostTensor& o = outs[0];
    int64_t flat = 0;
    ForEachIndex(o.shape, [&](const std::vector<int64_t>& idx) {
      bool c = in[0]->data[BroadcastIndex(in[0]->shape, idx)] != 0;
      const HostTensor* src = c ? in[1] : in[2];
      o.data[flat++] = src->data[BroadcastIndex(src->shape, idx)];
    });
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  const auto kF = DTypeClass::kFloat, kN = DTypeClass::kNumeric, kA = DTypeClass::kAny;
  const auto same = OutDType::kSame, boolean = OutDType::kBool;
  using X = const Expr&;
  RegisterUnary(
      r, "neg", kN, same, [](double x) { return -x; }, [](X x) { return -x; });
  RegisterUnary(
      r, "abs", kN, same, [](double x) { return std::fabs(x); },
      [](X x) {
        return x.type().is_float() ? M(MathOp::kAbs, x) : Select::Make(x < C(x, 0), -x, x);
      });
  RegisterUnary(
      r, "exp", kF, same, [](double x) { return std::exp(x); }, [](X x) { return ir::Exp(x); });
  RegisterUnary(
      r, "log", kF, same, [](double x) { return std::log(x); }, [](X x) { return ir::Log(x); });
  RegisterUnary(
      r, "log1p", kF, same, [](double x) { return std::log1p(x); },
      [](X x) { return M(MathOp::kLog1p, x); });
  RegisterUnary(
      r, "sqrt", kF, same, [](double x) { return std::sqrt(x); }, [](X x) { return ir::Sqrt(x); });
  RegisterUnary(
      r, "rsqrt", kF, same, [](double x) { return 1.0 / std::sqrt(x); },
      [](X x) { return C(x, 1) / ir::Sqrt(x); });
  RegisterUnary(
      r, "reciprocal", kF, same, [](double x) { return 1.0 / x; }, [](X x) { return C(x, 1) / x; });
  RegisterUnary(
      r, "erf", kF, same, [](double x) { return std::erf(x); }, [](X x) { return ir::Erf(x); });
  RegisterUnary(
      r, "sin", kF, same, [](double x) { return std::sin(x); },
      [](X x) { return M(MathOp::kSin, x); });
  RegisterUnary(
      r, "cos", kF, same, [](double x) { return std::cos(x); },
      [](X x) { return M(MathOp::kCos, x); });
  RegisterUnary(
      r, "tanh", kF, same, [](double x) { return std::tanh(x); }, [](X x) { return ir::Tanh(x); });
  RegisterUnary(r, "sigmoid", kF, same, MakeSigmoid);
  RegisterUnary(
      r, "relu", kN, same, [](double x) { return x > 0 ? x : (std::isnan(x) ? x : 0.0); },
      [](X x) { return Select::Make(x > C(x, 0) || IsNan(x), x, C(x, 0)); });
  RegisterUnary(
      r, "relu6", kN, same,
      [](double x) { return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0); },
      [](X x) {
        return Select::Make(
            IsNan(x), x, Select::Make(x < C(x, 0), C(x, 0), Select::Make(x > C(x, 6), C(x, 6), x)));
      });
  RegisterUnary(r, "leaky_relu", kF, same, MakeLeakyRelu);
  RegisterUnary(r, "gelu", kF, same, MakeGelu);
  RegisterUnary(r, "silu", kF, same, MakeSilu);
  RegisterUnary(r, "softplus", kF, same, MakeSoftplus);
  RegisterUnary(
      r, "floor", kN, same, [](double x) { return std::floor(x); }, Floor);
  RegisterUnary(
      r, "ceil", kN, same, [](double x) { return std::ceil(x); }, Ceil);
  RegisterUnary(
      r, "round", kN, same, [](double x) { return std::nearbyint(x); }, Round);
  RegisterUnary(
      r, "sign", kN, same, [](double x) { return std::isnan(x) ? x : double((x > 0) - (x < 0)); },
      Sign);
  RegisterUnary(
      r, "logical_not", kA, boolean, [](double x) { return double(x == 0); },
      [](X x) { return !ToBool(x); });
  RegisterUnary(
      r, "isnan", kA, boolean, [](double x) { return double(std::isnan(x)); }, IsNan);
  RegisterUnary(r, "clip", kN, same, MakeClip);
  // Math functions of floats (the torch converter casts integer inputs to float first).
  RegisterUnary(
      r, "tan", kF, same, [](double x) { return std::tan(x); },
      [](X x) { return M(MathOp::kTan, x); });
  RegisterUnary(
      r, "asin", kF, same, [](double x) { return std::asin(x); },
      [](X x) { return M(MathOp::kAsin, x); });
  RegisterUnary(
      r, "acos", kF, same, [](double x) { return std::acos(x); },
      [](X x) { return M(MathOp::kAcos, x); });
  RegisterUnary(
      r, "atan", kF, same, [](double x) { return std::atan(x); },
      [](X x) { return M(MathOp::kAtan, x); });
  RegisterUnary(
      r, "sinh", kF, same, [](double x) { return std::sinh(x); },
      [](X x) { return M(MathOp::kSinh, x); });
  RegisterUnary(
      r, "cosh", kF, same, [](double x) { return std::cosh(x); },
      [](X x) { return M(MathOp::kCosh, x); });
  RegisterUnary(
      r, "asinh", kF, same, [](double x) { return std::asinh(x); },
      [](X x) { return M(MathOp::kAsinh, x); });
  RegisterUnary(
      r, "acosh", kF, same, [](double x) { return std::acosh(x); },
      [](X x) { return M(MathOp::kAcosh, x); });
  RegisterUnary(
      r, "atanh", kF, same, [](double x) { return std::atanh(x); },
      [](X x) { return M(MathOp::kAtanh, x); });
  RegisterUnary(
      r, "expm1", kF, same, [](double x) { return std::expm1(x); },
      [](X x) { return M(MathOp::kExpm1, x); });
  RegisterUnary(
      r, "exp2", kF, same, [](double x) { return std::exp2(x); },
      [](X x) { return M(MathOp::kExp2, x); });
  RegisterUnary(
      r, "log2", kF, same, [](double x) { return std::log2(x); },
      [](X x) { return M(MathOp::kLog2, x); });
  RegisterUnary(
      r, "log10", kF, same, [](double x) { return std::log10(x); },
      [](X x) { return M(MathOp::kLog10, x); });
  RegisterUnary(
      r, "erfc", kF, same, [](double x) { return std::erfc(x); },
      [](X x) { return M(MathOp::kErfc, x); });
  RegisterUnary(
      r, "lgamma", kF, same, [](double x) { return std::lgamma(x); },
      [](X x) { return M(MathOp::kLgamma, x); });
  RegisterUnary(
      r, "trunc", kN, same, [](double x) { return std::trunc(x); }, Trunc);
  RegisterUnary(
      r, "isinf", kA, boolean, [](double x) { return double(std::isinf(x)); }, IsInf);
  RegisterUnary(
      r, "signbit", kN, boolean, [](double x) { return double(std::signbit(x)); }, SignBit);
  RegisterUnary(r, "elu", kF, same, MakeElu);
  RegisterCast(r);

  using D = double;
  RegisterBinary(
      r, "add", kN, same, true, [](D a, D b) { return a + b; }, [](X a, X b) { return a + b; });
  RegisterBinary(
      r, "sub", kN, same, true, [](D a, D b) { return a - b; }, [](X a, X b) { return a - b; });
  RegisterBinary(
      r, "mul", kN, same, true, [](D a, D b) { return a * b; }, [](X a, X b) { return a * b; });
  RegisterBinary(r, "div", kN, same, true, MakeDiv);
  RegisterBinary(
      r, "pow", kN, same, true, [](D a, D b) { return std::pow(a, b); }, Pow);
  RegisterBinary(r, "maximum", kN, same, true, Maximum, Maximum);
  RegisterBinary(r, "minimum", kN, same, true, Minimum, Minimum);
  RegisterBinary(r, "mod", kN, same, true, Remainder, Remainder);
  RegisterBinary(r, "fmod", kN, same, true, Fmod, Fmod);
  RegisterBinary(
      r, "fmax", kN, same, true, [](D a, D b) { return std::fmax(a, b); }, Fmax);
  RegisterBinary(
      r, "fmin", kN, same, true, [](D a, D b) { return std::fmin(a, b); }, Fmin);
  RegisterBinary(
      r, "atan2", kF, same, true, [](D a, D b) { return std::atan2(a, b); },
      [](X a, X b) {
        return ir::MathCall(MathOp::kAtan2, {a, b});
      });
  RegisterBinary(
      r, "hypot", kF, same, true, [](D a, D b) { return std::hypot(a, b); },
      [](X a, X b) {
        return ir::MathCall(MathOp::kHypot, {a, b});
      });
  RegisterBinary(
      r, "copysign", kF, same, true, [](D a, D b) { return std::copysign(a, b); },
      [](X a, X b) {
        return ir::MathCall(MathOp::kCopysign, {a, b});
      });
  RegisterBinary(
      r, "equal", kA, boolean, true, [](D a, D b) { return D(a == b); },
      [](X a, X b) { return a == b; });
  RegisterBinary(
      r, "not_equal", kA, boolean, true, [](D a, D b) { return D(a != b); },
      [](X a, X b) { return a != b; });
  RegisterBinary(
      r, "less", kN, boolean, true, [](D a, D b) { return D(a < b); },
      [](X a, X b) { return a < b; });
  RegisterBinary(
      r, "less_equal", kN, boolean, true, [](D a, D b) { return D(a <= b); },
      [](X a, X b) { return a <= b; });
  RegisterBinary(
      r, "greater", kN, boolean, true, [](D a, D b) { return D(a > b); },
      [](X a, X b) { return a > b; });
  RegisterBinary(
      r, "greater_equal", kN, boolean, true, [](D a, D b) { return D(a >= b); },
      [](X a, X b) { return a >= b; });
  RegisterBinary(
      r, "logical_and", kA, boolean, false, [](D a, D b) { return D(a != 0 && b != 0); },
      [](X a, X b) { return ToBool(a) && ToBool(b); });
  RegisterBinary(
      r, "logical_or", kA, boolean, false, [](D a, D b) { return D(a != 0 || b != 0); },
      [](X a, X b) { return ToBool(a) || ToBool(b); });
  RegisterBinary(
      r, "logical_xor", kA, boolean, false, [](D a, D b) { return D((a != 0) != (b != 0)); },
      [](X a, X b) { return ToBool(a) != ToBool(b); });
  RegisterWhere(r);
  ops::RegisterSpecialFunctionOps(r);
}

}  // namespace cinn_like::hlir
