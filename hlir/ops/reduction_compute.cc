/// \file The reductions and normalizations in lang. float16 and bfloat16 accumulate in
/// float32 (a reduction tensor `<name>_acc`, then a cast back), so the result matches the
/// reference's wide accumulation within the dtype's rounding. max/min of floats propagate NaN
/// in their own combine (ir/math.h maximum, minimum): one pass over the elements.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"
#include "ir/math.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::IterVar;
using ir::Tensor;
using Tensors = absl::StatusOr<std::vector<Tensor>>;

/// The type a reduction of `t` accumulates in.
ir::Type AccType(const ir::Type& t) { return t.is_low_precision_float() ? ir::Float(32) : t; }

/// The index of `x` for output index `out` of a reduction over `axes` (sorted), whose reduce
/// variables are `ks`; with keepdim, the reduced dims are present (size 1) in `out`.
Indices ReducedIndex(int rank, const std::vector<int>& axes, const std::vector<IterVar>& ks,
                     bool keepdim, const Indices& out) {
  Indices idx;
  size_t k = 0, o = 0;
  for (int d = 0; d < rank; ++d) {
    if (k < axes.size() && axes[k] == d) {
      idx.push_back(ks[k++].var);
      if (keepdim) ++o;
    } else {
      idx.push_back(out[o++]);
    }
  }
  return idx;
}

/// `idx` without the dims in `axes` (sorted).
Indices DropAxes(const Indices& idx, const std::vector<int>& axes) {
  Indices out;
  size_t k = 0;
  for (int d = 0; d < static_cast<int>(idx.size()); ++d) {
    if (k < axes.size() && axes[k] == d) {
      ++k;
    } else {
      out.push_back(idx[d]);
    }
  }
  return out;
}

std::vector<Expr> DropShape(const std::vector<Expr>& shape, const std::vector<int>& axes) {
  return DropAxes(shape, axes);
}

std::vector<IterVar> MakeReduceAxes(const Tensor& x, const std::vector<int>& axes) {
  std::vector<IterVar> ks;
  for (int a : axes) ks.push_back(ir::ReduceAxis(x->shape[a], absl::StrCat("k", a)));
  return ks;
}

/// The element count of `axes` of `x`, as a value of type t.
Expr Count(const Tensor& x, const std::vector<int>& axes, const ir::Type& t) {
  Expr n(1);
  for (int a : axes) n = n * x->shape[a];
  return ir::Cast::Make(t, n);
}

}  // namespace

ComputeFn ReduceCompute(const std::string& op, ir::ReduceKind kind, bool mean) {
  return
      [op, kind, mean](const std::vector<Tensor>& in, const AttributeMap& attrs,
                       const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
        Tensor x = in[0];
        int rank = static_cast<int>(x->shape.size());
        auto axes = ops::ReduceAxes(op, attrs, "axes", rank);
        if (!axes.ok()) return axes.status();
        auto keepdim = GetBool(attrs, "keepdim", op, false);
        if (!keepdim.ok()) return keepdim.status();
        std::vector<IterVar> ks = MakeReduceAxes(x, *axes);
        const ir::Type t = outs[0].type, acc = AccType(t);
        const auto& shape = outs[0].shape;
        auto read = [&, keep = *keepdim](const Indices& i) {
          return Widen(x(ReducedIndex(rank, *axes, ks, keep, i)));
        };
        auto reduce = [&](const Indices& i) {
          Expr v = read(i);
          switch (kind) {
            case ir::ReduceKind::kProd:
              return ir::ReduceProd(v, ks);
            case ir::ReduceKind::kMax:
              return ir::ReduceMax(v, ks);
            case ir::ReduceKind::kMin:
              return ir::ReduceMin(v, ks);
            default:
              return ir::ReduceSum(v, ks);
          }
        };
        const bool extreme = kind == ir::ReduceKind::kMax || kind == ir::ReduceKind::kMin;
        // An integer maximum or minimum of no elements (a zero or symbolic extent) is 0, as the
        // reference gives, not the reduction's identity (INT_MIN or INT_MAX); floats keep -+inf.
        bool empty_is_zero = false;
        for (int a : *axes) {
          const int64_t* n = ir::AsConstInt(x->shape[a]);
          if (n == nullptr || *n == 0) empty_is_zero = extreme && !t.is_float();
        }
        if (acc == t && !mean && !empty_is_zero) {
          return std::vector<Tensor>{ir::Compute(shape, reduce, name)};
        }
        // Loads need an index: a scalar result's intermediates have shape [1].
        const std::vector<Expr> inner_shape = shape.empty() ? std::vector<Expr>{Expr(1)} : shape;
        auto at = [](const Indices& i) { return i.empty() ? Indices{Expr(0)} : i; };
        Tensor r = ir::Compute(inner_shape, reduce, name + "_acc");
        Expr count = Count(x, *axes, acc);
        return std::vector<Tensor>{ir::Compute(
            shape,
            [&](const Indices& i) {
              Expr v = r(at(i));
              if (mean) v = v / count;
              if (empty_is_zero) v = ir::Select::Make(count == Const(acc, 0), Const(acc, 0), v);
              return CastTo(t, v);
            },
            name)};
      };
}

/// argmax / argmin in two reductions: the extreme value (`<name>_best`), then the first index
/// holding it, where a NaN (extreme in the reference) anywhere wins: the reduction `<name>_key`
/// takes the minimum of k for a NaN, n + k for an element equal to the extreme, 2n otherwise.
ComputeFn ArgReduceCompute(bool is_max) {
  const std::string op = is_max ? "argmax" : "argmin";
  return [op, is_max](const std::vector<Tensor>& in, const AttributeMap& attrs,
                      const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    Tensor x = in[0];
    int rank = static_cast<int>(x->shape.size());
    auto found = AxisAttrAxes(op, attrs, rank, std::nullopt);
    if (!found.ok()) return found.status();
    auto keepdim = GetBool(attrs, "keepdim", op, false);
    if (!keepdim.ok()) return keepdim.status();
    const std::vector<int> axes = *found;
    std::vector<IterVar> ks = MakeReduceAxes(x, axes);
    const auto& shape = outs[0].shape;
    const std::vector<Expr> inner_shape = shape.empty() ? std::vector<Expr>{Expr(1)} : shape;
    auto at = [](const Indices& i) { return i.empty() ? Indices{Expr(0)} : i; };
    auto read = [&, keep = *keepdim](const Indices& i) {
      return Widen(x(ReducedIndex(rank, axes, ks, keep, i)));
    };
    Tensor best = ir::Compute(
        inner_shape,
        [&](const Indices& i) {
          return is_max ? ir::ReduceMax(read(i), ks) : ir::ReduceMin(read(i), ks);
        },
        name + "_best");
    Expr n = x->shape[axes[0]];
    Tensor key = ir::Compute(
        inner_shape,
        [&](const Indices& i) {
          Expr v = read(i), k = ks[0].var;
          Expr hit = ir::Select::Make(v == best(at(i)), n + k, n + n);
          return ir::ReduceMin(ir::Select::Make(IsNan(v), k, hit), ks);
        },
        name + "_key");
    const ir::Type t = outs[0].type;
    return std::vector<Tensor>{ir::Compute(
        shape,
        [&](const Indices& i) {
          // r < n: a NaN's position; r < 2n: n + the first best position; otherwise no
          // element (an empty axis, symbolic: a static one is refused): 0, as the reference.
          Expr r = key(at(i));
          return ir::Cast::Make(
              t, ir::Select::Make(r < n, r, ir::Select::Make(r < n + n, r - n, Expr(0))));
        },
        name)};
  };
}

ComputeFn SoftmaxCompute(bool log) {
  const std::string op = log ? "log_softmax" : "softmax";
  return [op, log](const std::vector<Tensor>& in, const AttributeMap& attrs,
                   const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    Tensor x = in[0];
    int rank = static_cast<int>(x->shape.size());
    auto found = AxisAttrAxes(op, attrs, rank, -1);
    if (!found.ok()) return found.status();
    const std::vector<int> axes = *found;
    std::vector<IterVar> ks = MakeReduceAxes(x, axes);
    std::vector<Expr> reduced = DropShape(x->shape, axes);
    auto read = [&](const Indices& i) { return Widen(x(ReducedIndex(rank, axes, ks, false, i))); };
    Tensor mx = ir::Compute(
        reduced, [&](const Indices& i) { return ir::ReduceMax(read(i), ks); }, name + "_max");
    // exp(x - max) is a tensor of its own, read by the sum and by softmax's quotient: inlined
    // into both, or computed once per row where a tactic keeps the row (persistent_row).
    Tensor shifted_exp = ir::Compute(
        x->shape, [&](const Indices& i) { return ir::Exp(Widen(x(i)) - mx(DropAxes(i, axes))); },
        name + "_exp");
    shifted_exp.node()->recompute = true;
    Tensor sum = ir::Compute(
        reduced,
        [&](const Indices& i) {
          return ir::ReduceSum(shifted_exp(ReducedIndex(rank, axes, ks, false, i)), ks);
        },
        name + "_sum");
    const ir::Type t = outs[0].type;
    return std::vector<Tensor>{ir::Compute(
        x->shape,
        [&](const Indices& i) {
          Indices r = DropAxes(i, axes);
          if (log) return CastTo(t, Widen(x(i)) - mx(r) - ir::Log(sum(r)));
          // One reciprocal per row, a product per element (a float division is a dozen
          // instructions: the H100's float16 softmax was bound by them, not by memory).
          // Within an ulp of the quotient.
          Expr total = sum(r);
          return CastTo(t, shifted_exp(i) * (ir::MakeConst(total.type(), 1) / total));
        },
        name)};
  };
}

ComputeFn NormCompute(bool rms) {
  const std::string op = rms ? "rms_norm" : "layer_norm";
  return [op, rms](const std::vector<Tensor>& in, const AttributeMap& attrs,
                   const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    Tensor x = in[0];
    int rank = static_cast<int>(x->shape.size());
    auto found = AxisAttrAxes(op, attrs, rank, -1, /*to_end=*/true);
    if (!found.ok()) return found.status();
    auto eps = GetFloat(attrs, "epsilon", op, 1e-5);
    if (!eps.ok()) return eps.status();
    const std::vector<int> axes = *found;
    const int a = axes[0];
    std::vector<IterVar> ks = MakeReduceAxes(x, axes);
    std::vector<Expr> outer = DropShape(x->shape, axes);
    const ir::Type t = outs[0].type, acc = AccType(t);
    Expr n = Count(x, axes, acc);
    auto read = [&](const Indices& i) { return Widen(x(ReducedIndex(rank, axes, ks, false, i))); };
    Tensor sum;
    if (!rms) {
      sum = ir::Compute(
          outer, [&](const Indices& i) { return ir::ReduceSum(read(i), ks); }, name + "_sum");
    }
    auto mean = [&](const Indices& o) { return rms ? Const(acc, 0) : sum(o) / n; };
    Tensor sq = ir::Compute(
        outer,
        [&](const Indices& i) {
          Expr c = read(i) - mean(i);
          return ir::ReduceSum(c * c, ks);
        },
        name + "_sqsum");
    return std::vector<Tensor>{ir::Compute(
        x->shape,
        [&](const Indices& i) {
          Indices o(i.begin(), i.begin() + a), inner(i.begin() + a, i.end());
          Expr y =
              (Widen(x(i)) - mean(o)) * (Const(acc, 1) / ir::Sqrt(sq(o) / n + Const(acc, *eps)));
          if (in.size() > 1) y = y * Widen(in[1](inner));
          if (in.size() > 2) y = y + Widen(in[2](inner));
          return CastTo(t, y);
        },
        name)};
  };
}

ComputeFn BatchNormCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    int rank = static_cast<int>(in[0]->shape.size());
    auto axis = GetInt(attrs, "axis", "batch_norm", 1);
    if (!axis.ok()) return axis.status();
    auto a = NormalizeAxis(*axis, rank, "batch_norm");
    if (!a.ok()) return a.status();
    auto eps = GetFloat(attrs, "epsilon", "batch_norm", 1e-5);
    if (!eps.ok()) return eps.status();
    const ir::Type t = outs[0].type, acc = AccType(t);
    return std::vector<Tensor>{ir::Compute(
        in[0]->shape,
        [&](const Indices& i) {
          Expr c = i[*a];
          Expr s = Widen(in[1](c)) / ir::Sqrt(Widen(in[4](c)) + Const(acc, *eps));
          return CastTo(t, Widen(in[0](i)) * s + (Widen(in[2](c)) - Widen(in[3](c)) * s));
        },
        name)};
  };
}

}  // namespace cinn_like::hlir::ops
