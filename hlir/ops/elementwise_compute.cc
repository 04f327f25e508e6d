/// \file The elementwise ops in lang. Floats compute in their own type, float16 and bfloat16
/// in float32 (rounded once, at the store); integer ops whose reference is defined through
/// double (clip, pow) compute in float64 and convert back as the interpreter rounds.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "hlir/ops/compute_util.h"
#include "ir/math.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::MathOp;
using ir::Select;

Expr M(MathOp op, Expr x) { return ir::MathCall(op, {std::move(x)}); }
Expr C(const Expr& like, double v) { return Const(like.type(), v); }
Expr Sigmoid(const Expr& x) { return C(x, 1) / (C(x, 1) + ir::Exp(-x)); }

/// The scalar function of unary `op` on `x` (floats already widened).
absl::StatusOr<Expr> UnaryExpr(const std::string& op, Expr x, const AttributeMap& attrs) {
  const ir::Type t = x.type();
  const bool flt = t.is_float();
  if (op == "neg") return -x;
  if (op == "abs") return flt ? M(MathOp::kAbs, x) : Select::Make(x < C(x, 0), -x, x);
  if (op == "exp") return ir::Exp(x);
  if (op == "log") return ir::Log(x);
  if (op == "log1p") return M(MathOp::kLog1p, x);
  if (op == "sqrt") return ir::Sqrt(x);
  if (op == "rsqrt") return C(x, 1) / ir::Sqrt(x);
  if (op == "reciprocal") return C(x, 1) / x;
  if (op == "sin") return M(MathOp::kSin, x);
  if (op == "cos") return M(MathOp::kCos, x);
  if (op == "tanh") return ir::Tanh(x);
  if (op == "sigmoid") return Sigmoid(x);
  if (op == "silu") return x * Sigmoid(x);
  if (op == "relu") return Select::Make(x > C(x, 0) || IsNan(x), x, C(x, 0));
  if (op == "relu6") {
    return Select::Make(IsNan(x), x,
                        Select::Make(x < C(x, 0), C(x, 0), Select::Make(x > C(x, 6), C(x, 6), x)));
  }
  if (op == "leaky_relu") {
    auto slope = GetFloat(attrs, "negative_slope", op, 0.01);
    if (!slope.ok()) return slope.status();
    return Select::Make(x >= C(x, 0), x, C(x, *slope) * x);
  }
  if (op == "gelu") {
    auto approx = GetString(attrs, "approximate", op, "none");
    if (!approx.ok()) return approx.status();
    if (*approx == "tanh") {
      Expr inner = C(x, std::sqrt(2.0 / M_PI)) * (x + C(x, 0.044715) * x * x * x);
      return C(x, 0.5) * x * (C(x, 1) + ir::Tanh(inner));
    }
    return C(x, 0.5) * x * (C(x, 1) + ir::Erf(x * C(x, M_SQRT1_2)));
  }
  if (op == "softplus") {
    auto beta = GetFloat(attrs, "beta", op, 1.0);
    if (!beta.ok()) return beta.status();
    auto threshold = GetFloat(attrs, "threshold", op, 20.0);
    if (!threshold.ok()) return threshold.status();
    Expr bx = C(x, *beta) * x;
    return Select::Make(bx > C(x, *threshold), x, M(MathOp::kLog1p, ir::Exp(bx)) / C(x, *beta));
  }
  if (op == "floor") return flt ? M(MathOp::kFloor, x) : x;
  if (op == "ceil") return flt ? M(MathOp::kCeil, x) : x;
  if (op == "round") return flt ? M(MathOp::kRint, x) : x;  // half to even
  if (op == "sign") {
    Expr s = Select::Make(x > C(x, 0), C(x, 1), Select::Make(x < C(x, 0), C(x, -1), C(x, 0)));
    return flt ? Select::Make(IsNan(x), x, s) : s;
  }
  if (op == "logical_not") return !ToBool(x);
  if (op == "isnan") return IsNan(x);
  if (op == "clip") {
    auto lo = GetFloat(attrs, "min", op, -INFINITY);
    if (!lo.ok()) return lo.status();
    auto hi = GetFloat(attrs, "max", op, INFINITY);
    if (!hi.ok()) return hi.status();
    Expr v = flt ? x : ir::Cast::Make(ir::Float(64), x);
    Expr r = v;
    if (std::isfinite(*lo)) r = Select::Make(r < C(v, *lo), C(v, *lo), r);
    if (std::isfinite(*hi)) r = Select::Make(r > C(v, *hi), C(v, *hi), r);
    return flt ? Select::Make(IsNan(x), x, r) : r;
  }
  return absl::UnimplementedError(absl::StrCat("op ", op, ": no compute in lang"));
}

/// Integer a / b rounded as `mode` says ("trunc" or "floor"); 0 where b is 0.
Expr IntDiv(Expr a, Expr b, const std::string& mode) {
  Expr zero = C(b, 0);
  Expr safe = Select::Make(b == zero, C(b, 1), b);
  Expr q = a / safe;
  if (mode == "floor" && a.type().is_int()) {
    Expr r = a % safe;
    q = Select::Make(r != zero && ((r < zero) != (safe < zero)), q - C(q, 1), q);
  }
  return Select::Make(b == zero, zero, q);
}

/// Python's remainder (the divisor's sign); 0 for integers where b is 0.
Expr Remainder(Expr a, Expr b) {
  Expr zero = C(b, 0);
  if (a.type().is_float()) {  // fmod, then moved to the divisor's sign
    Expr r = a % b;
    return Select::Make(r != zero && ((r < zero) != (b < zero)), r + b, r);
  }
  Expr safe = Select::Make(b == zero, C(b, 1), b);
  Expr r = a % safe;
  if (a.type().is_int()) {
    r = Select::Make(r != zero && ((r < zero) != (safe < zero)), r + safe, r);
  }
  return Select::Make(b == zero, zero, r);
}

absl::StatusOr<Expr> BinaryExpr(const std::string& op, Expr a, Expr b, const AttributeMap& attrs) {
  const bool flt = a.type().is_float();
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") {
    auto mode = GetString(attrs, "rounding_mode", op, "");
    if (!mode.ok()) return mode.status();
    if (!flt) return IntDiv(a, b, *mode);
    if (mode->empty()) return a / b;
    return M(*mode == "trunc" ? MathOp::kTrunc : MathOp::kFloor, a / b);
  }
  if (op == "pow") {
    if (flt) return ir::Pow(a, b);
    return ir::Pow(ir::Cast::Make(ir::Float(64), a), ir::Cast::Make(ir::Float(64), b));
  }
  // NaN-propagating maximum / minimum (the IR's max and min are IEEE maxNum / minNum).
  if (op == "maximum" || op == "minimum") {
    Expr m = op == "maximum" ? ir::max(a, b) : ir::min(a, b);
    if (!flt) return m;
    return Select::Make(IsNan(a), a, Select::Make(IsNan(b), b, m));
  }
  if (op == "mod") return Remainder(a, b);
  if (op == "equal") return a == b;
  if (op == "not_equal") return a != b;
  if (op == "less") return a < b;
  if (op == "less_equal") return a <= b;
  if (op == "greater") return a > b;
  if (op == "greater_equal") return a >= b;
  if (op == "logical_and") return ToBool(a) && ToBool(b);
  if (op == "logical_or") return ToBool(a) || ToBool(b);
  if (op == "logical_xor") return ToBool(a) != ToBool(b);
  return absl::UnimplementedError(absl::StrCat("op ", op, ": no compute in lang"));
}

}  // namespace

ComputeFn UnaryCompute(const std::string& op) {
  return [op](const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
              const std::vector<ComputeOutput>& outs,
              const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    // Validate attributes once on a dummy operand, so the Compute body cannot fail.
    ir::Var probe("probe", Widen(in[0](Indices(in[0]->shape.size(), ir::Expr(0)))).type());
    auto check = UnaryExpr(op, probe, attrs);
    if (!check.ok()) return check.status();
    ir::Type out_type = outs[0].type;
    ir::Tensor x = in[0];
    ir::Tensor y = ir::Compute(
        outs[0].shape,
        [&](const Indices& i) { return CastTo(out_type, *UnaryExpr(op, Widen(x(i)), attrs)); },
        name);
    return std::vector<ir::Tensor>{y};
  };
}

ComputeFn BinaryCompute(const std::string& op) {
  return [op](const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
              const std::vector<ComputeOutput>& outs,
              const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    ir::Type t = Widen(in[0](Indices(in[0]->shape.size(), ir::Expr(0)))).type();
    auto check = BinaryExpr(op, ir::Var("pa", t), ir::Var("pb", t), attrs);
    if (!check.ok()) return check.status();
    ir::Type out_type = outs[0].type;
    ir::Tensor a = in[0], b = in[1];
    ir::Tensor y = ir::Compute(
        outs[0].shape,
        [&](const Indices& i) {
          Expr x = Widen(BroadcastRead(a, i)), z = Widen(BroadcastRead(b, i));
          if (x.type() != z.type()) {  // logical ops accept mixed dtypes
            x = ToBool(x);
            z = ToBool(z);
          }
          return CastTo(out_type, *BinaryExpr(op, x, z, attrs));
        },
        name);
    return std::vector<ir::Tensor>{y};
  };
}

ComputeFn CastCompute() {
  return [](const std::vector<ir::Tensor>& in, const AttributeMap&,
            const std::vector<ComputeOutput>& outs,
            const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    ir::Type t = outs[0].type;
    ir::Tensor x = in[0];
    return std::vector<ir::Tensor>{ir::Compute(
        outs[0].shape, [&](const Indices& i) { return CastTo(t, x(i)); }, name)};
  };
}

ComputeFn WhereCompute() {
  return [](const std::vector<ir::Tensor>& in, const AttributeMap&,
            const std::vector<ComputeOutput>& outs,
            const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    return std::vector<ir::Tensor>{ir::Compute(
        outs[0].shape,
        [&](const Indices& i) {
          return Select::Make(BroadcastRead(in[0], i), BroadcastRead(in[1], i),
                              BroadcastRead(in[2], i));
        },
        name)};
  };
}

}  // namespace cinn_like::hlir::ops
