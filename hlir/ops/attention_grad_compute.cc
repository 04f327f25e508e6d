/// \file attention_grad decomposed in lang (x86, and the GPU where the fused kernel declines):
/// the scores q kᵀ (`<name>_qk`, masked and scaled as attention's compute does), the
/// probabilities P (`<name>_p`, dropout's weights applied where read), dP = grad_out vᵀ
/// (`<name>_dp`), Di = rowsum(grad_out ∘ out) (`<name>_di`) and dS (`<name>_ds`); then dqk =
/// scale dS, and dk, dv as sums over the query heads of a group and its query rows.
/// Accumulation is in float32 for float16/bfloat16/float32 inputs, float64 for float64.
#include <cmath>
#include <functional>

#include "hlir/ops/attention.h"
#include "hlir/ops/compute_util.h"
#include "ir/math.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Tensors = absl::StatusOr<std::vector<Tensor>>;

}  // namespace

ComputeFn AttentionGradCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    const Tensor &q = in[0], &k = in[1], &v = in[2], &o = in[3], &go = in[4], &lse = in[5];
    // attention's inputs: q, k, v, then the mask, seed and stream (after the logsumexp here).
    std::vector<Tensor> fwd{q, k, v};
    fwd.insert(fwd.end(), in.begin() + 6, in.end());
    const int64_t* d_const = ir::AsConstInt(q->shape[3]);
    auto a = ReadAttentionAttrs(attrs, d_const ? *d_const : -1, fwd.size());
    if (!a.ok()) return a.status();
    const ir::Type t = outs[2].type;
    const ir::Type acc = t.is_low_precision_float() ? ir::Float(32) : t;
    const Expr batch = q->shape[0], heads = q->shape[1], lq = q->shape[2], lk = k->shape[2];
    const Expr group = QueryHeadGroup(q, k);
    const bool grouped = !ir::IsConstInt(group, 1);
    auto widen = [&](const Expr& x) { return acc == ir::Float(64) ? x : Widen(x); };
    const Expr inf = Const(acc, INFINITY), zero = Const(acc, 0);

    Tensor qk = HeadProducts(q, k, acc, name + "_qk");
    auto score = MaskedScore(qk, *a, fwd, acc);
    Tensor p = ir::Compute(
        {batch, heads, lq, lk},
        [&](const Indices& i) {
          Expr s = score(i);
          Expr l = lse(i[0], i[1], i[2]);
          if (acc != l.type()) l = ir::Cast::Make(acc, l);
          return ir::Select::Make(s == -inf, zero, ir::Exp(s - l));
        },
        name + "_p");
    auto dropout = DropoutFactor(*a, fwd, acc);
    auto weighted = [&](const Tensor& x, const Indices& i) {
      return dropout ? x(i) * dropout(i) : x(i);
    };
    Tensor dp = HeadProducts(go, v, acc, name + "_dp");
    ir::IterVar f = ir::ReduceAxis(v->shape[3], "f");
    Tensor di = ir::Compute(
        {batch, heads, lq},
        [&](const Indices& i) {
          return ir::ReduceSum(
              widen(go(i[0], i[1], i[2], f.var)) * widen(o(i[0], i[1], i[2], f.var)), {f});
        },
        name + "_di");
    Tensor ds = ir::Compute(
        {batch, heads, lq, lk},
        [&](const Indices& i) { return p(i) * (weighted(dp, i) - di(i[0], i[1], i[2])); },
        name + "_ds");
    const Expr scale = Const(acc, a->scale);
    Tensor dqk = ir::Compute(
        outs[2].shape, [&](const Indices& i) { return CastTo(t, ds(i) * scale); }, name + "_2");
    // dk[b, g, j, x] and dv[b, g, j, x]: sums over the group's query heads and the rows of
    // x(b, h, r, j) y(b, h, r, x) (a reduction of its own, then scaled and rounded where read).
    using Read = std::function<Expr(const Indices&)>;
    auto over_queries = [&](const Read& x, const Tensor& y, const ComputeOutput& out,
                            const std::string& tensor_name, bool scaled) {
      Tensor sum = ir::Compute(
          out.shape,
          [&](const Indices& i) {
            ir::IterVar r = ir::ReduceAxis(lq, "r");
            std::vector<ir::IterVar> axes{r};
            Expr h = i[1];
            if (grouped) {
              ir::IterVar g = ir::ReduceAxis(group, "g");
              axes.insert(axes.begin(), g);
              h = i[1] * group + g.var;
            }
            return ir::ReduceSum(x({i[0], h, r.var, i[2]}) * widen(y(i[0], h, r.var, i[3])), axes);
          },
          tensor_name + "_sum");
      return ir::Compute(
          out.shape,
          [&](const Indices& i) { return CastTo(out.type, scaled ? sum(i) * scale : sum(i)); },
          tensor_name);
    };
    Tensor dk = over_queries([&](const Indices& i) { return ds(i); }, q, outs[0], name, true);
    Tensor dvt = over_queries([&](const Indices& i) { return weighted(p, i); }, go, outs[1],
                              name + "_1", false);
    return std::vector<Tensor>{dk, dvt, dqk};
  };
}

}  // namespace cinn_like::hlir::ops
