/// \file The injective shape ops in lang: each output element reads one input element at a
/// remapped index (slice's compute lives next to its attribute parsing in shape_ops.cc).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlir/ops/compute_util.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Tensors = absl::StatusOr<std::vector<Tensor>>;
using Body = std::function<Expr(const Indices&)>;

std::vector<int64_t> StaticShape(const std::vector<Expr>& shape) {
  std::vector<int64_t> out;
  for (const Expr& e : shape) out.push_back(ir::AsConstInt(e) ? *ir::AsConstInt(e) : -1);
  return out;
}

Tensors One(const ComputeOutput& out, const Body& body, const std::string& name) {
  return std::vector<Tensor>{ir::Compute(out.shape, body, name)};
}

Tensors Reshape(const std::vector<Tensor>& in, const ComputeOutput& out, const std::string& name) {
  std::vector<int64_t> from = StaticShape(in[0]->shape), to = StaticShape(out.shape);
  Tensor x = in[0];
  return One(
      out,
      [&, from, to](const Indices& o) {
        Expr flat(0);
        for (size_t d = 0; d < to.size(); ++d) flat = flat * Expr(static_cast<int>(to[d])) + o[d];
        Indices idx(from.size());
        for (int d = static_cast<int>(from.size()) - 1; d >= 0; --d) {
          Expr size(static_cast<int>(from[d]));
          idx[d] = d == 0 ? flat : flat % size;
          flat = flat / size;
        }
        return x(idx);
      },
      name);
}

}  // namespace

ComputeFn ShapeOpCompute(const std::string& op) {
  return [op](const std::vector<Tensor>& in, const AttributeMap& attrs,
              const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    const ComputeOutput& out = outs[0];
    int out_rank = static_cast<int>(out.shape.size());
    if (op == "reshape") return Reshape(in, out, name);
    if (op == "broadcast_to") {
      return One(
          out, [&](const Indices& o) { return BroadcastRead(in[0], o); }, name);
    }
    if (op == "transpose") {
      auto perm = GetInts(attrs, "perm", op);
      if (!perm.ok()) return perm.status();
      return One(
          out,
          [&](const Indices& o) {
            Indices idx(o.size());
            for (size_t d = 0; d < o.size(); ++d) idx[(*perm)[d]] = o[d];
            return in[0](idx);
          },
          name);
    }
    if (op == "expand_dims") {
      auto axes = GetInts(attrs, "axes", op);
      if (!axes.ok()) return axes.status();
      std::vector<bool> inserted(out_rank, false);
      for (int64_t a : *axes) inserted[a < 0 ? a + out_rank : a] = true;
      return One(
          out,
          [&](const Indices& o) {
            Indices idx;
            for (int d = 0; d < out_rank; ++d) {
              if (!inserted[d]) idx.push_back(o[d]);
            }
            return in[0](idx);
          },
          name);
    }
    if (op == "squeeze") {
      auto axes = GetInts(attrs, "axes", op, std::vector<int64_t>{});
      if (!axes.ok()) return axes.status();
      int rank = static_cast<int>(in[0]->shape.size());
      std::vector<bool> drop(rank, false);
      for (int d = 0; d < rank; ++d) drop[d] = axes->empty() && ir::IsConstInt(in[0]->shape[d], 1);
      for (int64_t a : *axes) drop[a < 0 ? a + rank : a] = true;
      return One(
          out,
          [&](const Indices& o) {
            Indices idx;
            size_t k = 0;
            for (int d = 0; d < rank; ++d) idx.push_back(drop[d] ? Expr(0) : o[k++]);
            return in[0](idx);
          },
          name);
    }
    if (op == "concat") {
      auto axis = GetInt(attrs, "axis", op, 0);
      if (!axis.ok()) return axis.status();
      int a = static_cast<int>(*axis < 0 ? *axis + out_rank : *axis);
      return One(
          out,
          [&](const Indices& o) {
            // A Select chain from the last input back; indices are clamped into each input so
            // the loads a select evaluates on both sides stay in bounds.
            std::vector<int64_t> starts;
            int64_t offset = 0;
            for (const Tensor& t : in) {
              starts.push_back(offset);
              offset += *ir::AsConstInt(t->shape[a]);
            }
            Expr value;
            for (int i = static_cast<int>(in.size()) - 1; i >= 0; --i) {
              int64_t extent = *ir::AsConstInt(in[i]->shape[a]);
              if (extent == 0) continue;
              Indices idx = o;
              Expr local = o[a] - Expr(static_cast<int>(starts[i]));
              idx[a] = ir::min(ir::max(local, Expr(0)), Expr(static_cast<int>(extent - 1)));
              Expr v = in[i](idx);
              value = value.defined()
                          ? ir::Select::Make(o[a] < Expr(static_cast<int>(starts[i] + extent)), v,
                                             value)
                          : v;
            }
            return value;
          },
          name);
    }
    if (op == "fill") {
      auto value = GetFloat(attrs, "value", op);
      if (!value.ok()) return value.status();
      auto dtype = ParseDType(*GetString(attrs, "dtype", op, "float32"));
      if (!dtype.ok()) return dtype.status();
      double v = RoundToDType(*value, *dtype);
      ir::Type t = out.type;
      return One(
          out, [t, v](const Indices&) { return Const(t, v); }, name);
    }
    if (op == "arange") {
      auto start = GetFloat(attrs, "start", op, 0.0);
      if (!start.ok()) return start.status();
      auto step = GetFloat(attrs, "step", op, 1.0);
      if (!step.ok()) return step.status();
      ir::Type t = out.type, f64 = ir::Float(64);
      double b = *start, s = *step;
      return One(
          out,
          [=](const Indices& o) {
            return CastTo(t, Const(f64, b) + ir::Cast::Make(f64, o[0]) * Const(f64, s));
          },
          name);
    }
    return absl::UnimplementedError(absl::StrCat("op ", op, ": no compute in lang"));
  };
}

}  // namespace cinn_like::hlir::ops
