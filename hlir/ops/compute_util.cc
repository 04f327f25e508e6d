/// \file Shared helpers of the op computes.
#include "hlir/ops/compute_util.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "ir/intrinsics.h"
#include "ir/math.h"
#include "ir/transforms/simplify.h"

namespace cinn_like::hlir::ops {

ir::Expr BroadcastRead(const ir::Tensor& t, const Indices& out) {
  const auto& shape = t->shape;
  size_t rank = shape.size(), offset = out.size() - rank;
  Indices idx;
  for (size_t d = 0; d < rank; ++d) {
    idx.push_back(ir::IsConstInt(shape[d], 1) ? ir::Expr(0) : out[offset + d]);
  }
  return t(idx);
}

ir::Expr IsNan(const ir::Expr& x) {
  if (!x.type().is_float()) return ir::MakeConst(ir::Bool(), 0);
  return x != x;
}

ir::Expr ToBool(const ir::Expr& x) {
  if (x.type().is_bool()) return x;
  return x != Const(x.type(), 0);
}

ir::Expr Widen(const ir::Expr& x) {
  if (x.type().is_low_precision_float()) return ir::Cast::Make(ir::Float(32), x);
  return x;
}

ir::Expr Const(const ir::Type& t, double v) { return ir::MakeConst(t, v); }

ir::Expr CastTo(const ir::Type& t, const ir::Expr& x) {
  const ir::Type& from = x.type();
  if (from == t) return x;
  if (t.is_bool()) return ToBool(x);
  if (from.is_float() && t.is_integer()) {
    // Truncate in int64, then wrap to the narrower type; NaN and infinities give 0. A value past
    // int64 (float32, bfloat16 and float64 reach 2^63) is first wrapped modulo 2^64, as
    // RoundToDType does: a plain conversion of it is undefined (LLVM's fptosi is poison). There
    // the value is a multiple of 2^11, so x - trunc(x / 2^64) * 2^64 is exact.
    ir::Expr v = x;
    if (from.bits() > 16 || from.is_bfloat16()) {
      const ir::Type f64 = ir::Float(64, from.lanes());
      ir::Expr d = from == f64 ? x : ir::Cast::Make(f64, x);
      const double half = std::ldexp(1.0, 63), range = std::ldexp(1.0, 64);
      ir::Expr m =
          d - ir::MathCall(ir::MathOp::kTrunc, {d * Const(f64, 1 / range)}) * Const(f64, range);
      m = ir::Select::Make(m >= Const(f64, half), m - Const(f64, range),
                           ir::Select::Make(m < Const(f64, -half), m + Const(f64, range), m));
      v = ir::Select::Make(ir::MathCall(ir::MathOp::kAbs, {d}) < Const(f64, half), d, m);
    }
    ir::Expr finite = ir::MathCall(ir::MathOp::kAbs, {x}) < Const(from, INFINITY);
    ir::Expr as64 = ir::Select::Make(finite, ir::Cast::Make(ir::Int(64), v), Const(ir::Int(64), 0));
    return t == ir::Int(64) ? as64 : ir::Cast::Make(t, as64);
  }
  return ir::Cast::Make(t, x);
}

absl::StatusOr<ir::LibraryFunction> FindLibrary(const ir::Target& target, ir::LibraryCall call,
                                                const std::vector<ir::Expr>& args) {
  std::vector<int64_t> values;
  for (const ir::Expr& e : args) {
    const ir::Expr simple = ir::Simplify(e);  // AsConstInt points into it: keep it alive
    const int64_t* v = ir::AsConstInt(simple);
    values.push_back(v ? *v : ir::kArgAtCall);
  }
  return ir::FindLibraryFunction(target, call, values);
}

ExternTensors MadeBy(const ir::LibraryFunction& f, std::vector<ir::Tensor> tensors) {
  std::string why = absl::StrCat(f.library, " ", f.function);
  if (!f.checked.empty()) absl::StrAppend(&why, " (", f.checked, ")");
  return ExternTensors{std::move(tensors), why};
}

ExternTensors Declined(std::string why) { return ExternTensors{{}, std::move(why)}; }

ir::Expr PhiloxAt(const ir::Expr& seed, const ir::Expr& stream, const std::vector<ir::Expr>& shape,
                  const std::vector<ir::Expr>& indices) {
  const ir::Type i64 = ir::Int(64);
  ir::Expr flat = ir::Cast::Make(i64, ir::Expr(0));
  for (size_t d = 0; d < indices.size(); ++d) {
    flat = flat * ir::Cast::Make(i64, shape[d]) + ir::Cast::Make(i64, indices[d]);
  }
  return ir::Call::Make(ir::Float(32), ir::IntrinsicOp::kPhiloxUniform, {seed, stream, flat});
}

ir::Expr AsInt64(const ir::Expr& e) {
  return e.type() == ir::Int(64) ? e : ir::Cast::Make(ir::Int(64), e);
}

std::vector<ir::Expr> RowMajorStrideExprs(const std::vector<ir::Expr>& shape) {
  std::vector<ir::Expr> strides(shape.size());
  ir::Expr stride(int64_t{1});
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride = stride * AsInt64(shape[d]);
  }
  return strides;
}

}  // namespace cinn_like::hlir::ops
