/// \file Shared helpers of the op computes.
#include "hlir/ops/compute_util.h"

#include <cmath>

#include "ir/math.h"

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
    // Truncate in int64, then wrap to the narrower type; NaN and infinities give 0.
    ir::Expr finite = ir::MathCall(ir::MathOp::kAbs, {x}) < Const(from, INFINITY);
    ir::Expr as64 = ir::Select::Make(finite, ir::Cast::Make(ir::Int(64), x), Const(ir::Int(64), 0));
    return t == ir::Int(64) ? as64 : ir::Cast::Make(t, as64);
  }
  return ir::Cast::Make(t, x);
}

}  // namespace cinn_like::hlir::ops
