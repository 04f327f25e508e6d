/// \file attention decomposed in lang (x86, and the GPU when the fused kernel is off): the
/// scores q kᵀ (`<name>_qk`), masked and scaled by an expression each reader inlines; their
/// row max (`<name>_max`); the exponentials (`<name>_p`), their row sum (`<name>_sum`) and
/// p v (`<name>_pv`, each probability times its dropout factor with dropout); then out =
/// pv / sum and logsumexp = max + log(sum). Accumulation is in float32 for
/// float16/bfloat16/float32 inputs, float64 for float64.
#include <cmath>

#include "hlir/ops/attention.h"
#include "hlir/ops/compute_util.h"
#include "ir/math.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Tensors = absl::StatusOr<std::vector<Tensor>>;

}  // namespace

std::function<Expr(const std::vector<Expr>&)> MaskedScore(const Tensor& qk, const AttentionAttrs& a,
                                                          const std::vector<Tensor>& in,
                                                          ir::Type acc) {
  return [=](const std::vector<Expr>& i) {
    Expr s = qk(i) * Const(acc, a.scale);
    Expr keep;
    if (a.causal) keep = i[3] <= i[2];
    if (a.has_mask) {
      Expr m = BroadcastRead(in[3], i);
      if (m.type().is_bool()) {
        keep = keep.defined() ? (keep && m) : m;
      } else {
        s = s + ir::Cast::Make(acc, m);
      }
    }
    return keep.defined() ? ir::Select::Make(keep, s, -Const(acc, INFINITY)) : s;
  };
}

std::function<Expr(const std::vector<Expr>&)> DropoutFactor(const AttentionAttrs& a,
                                                            const std::vector<Tensor>& in,
                                                            ir::Type acc) {
  if (a.dropout == 0) return nullptr;
  const Tensor &q = in[0], &k = in[1], seed = in[in.size() - 2], stream = in[in.size() - 1];
  const Expr keep_below = ir::FloatImm::Make(ir::Float(32), 1 - a.dropout);
  const Expr kept = Const(acc, 1 / (1 - a.dropout)), dropped = Const(acc, 0);
  // The probabilities [B, H, Lq, Lk], numbered as random_uniform of that shape numbers them.
  const std::vector<Expr> scores{q->shape[0], q->shape[1], q->shape[2], k->shape[2]};
  return [=](const std::vector<Expr>& i) {
    Expr u = PhiloxAt(seed({Expr(0)}), stream({Expr(0)}), scores, i);
    return ir::Select::Make(u < keep_below, kept, dropped);
  };
}

Expr QueryHeadGroup(const Tensor& q, const Tensor& k) {
  const int64_t *h = ir::AsConstInt(q->shape[1]), *hkv = ir::AsConstInt(k->shape[1]);
  return h && hkv ? ir::IndexConst(*h / *hkv) : q->shape[1] / k->shape[1];
}

Tensor HeadProducts(const Tensor& a, const Tensor& b, ir::Type acc, const std::string& name) {
  const Expr group = QueryHeadGroup(a, b);
  auto widen = [&](const Expr& x) { return acc == ir::Float(64) ? x : Widen(x); };
  ir::IterVar e = ir::ReduceAxis(a->shape[3], "e");
  return ir::Compute(
      {a->shape[0], a->shape[1], a->shape[2], b->shape[2]},
      [&](const Indices& i) {
        Expr h = ir::IsConstInt(group, 1) ? i[1] : i[1] / group;
        return ir::ReduceSum(widen(a(i[0], i[1], i[2], e.var)) * widen(b(i[0], h, i[3], e.var)),
                             {e});
      },
      name);
}

ComputeFn AttentionCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    const int64_t* d_const = ir::AsConstInt(q->shape[3]);
    auto a = ReadAttentionAttrs(attrs, d_const ? *d_const : -1, in.size());
    if (!a.ok()) return a.status();
    const ir::Type t = outs[0].type;
    const ir::Type acc = t.is_low_precision_float() ? ir::Float(32) : t;
    const Expr batch = q->shape[0], heads = q->shape[1], lq = q->shape[2], lk = k->shape[2];
    const Expr group = QueryHeadGroup(q, k);
    auto kv_head = [&](const Expr& h) { return ir::IsConstInt(group, 1) ? h : h / group; };
    auto widen = [&](const Expr& x) { return acc == ir::Float(64) ? x : Widen(x); };
    const Expr inf = Const(acc, INFINITY);

    Tensor qk = HeadProducts(q, k, acc, name + "_qk");
    auto score = MaskedScore(qk, *a, in, acc);
    ir::IterVar j = ir::ReduceAxis(lk, "j");
    Tensor mx = ir::Compute(
        {batch, heads, lq},
        [&](const Indices& i) {
          return ir::ReduceMax(score({i[0], i[1], i[2], j.var}), {j});
        },
        name + "_max");
    // A row with no kept key has max -inf: its exponentials are exp(-inf - 0) = 0.
    auto shift = [&](const Indices& i) {
      Expr m = mx(i);
      return ir::Select::Make(m == -inf, Const(acc, 0), m);
    };
    Tensor p = ir::Compute(
        {batch, heads, lq, lk},
        [&](const Indices& i) {
          return ir::Exp(score(i) - shift({i[0], i[1], i[2]}));
        },
        name + "_p");
    Tensor sum = ir::Compute(
        {batch, heads, lq},
        [&](const Indices& i) { return ir::ReduceSum(p(i[0], i[1], i[2], j.var), {j}); },
        name + "_sum");
    ir::IterVar jv = ir::ReduceAxis(lk, "j");
    auto dropout = DropoutFactor(*a, in, acc);
    Tensor pv = ir::Compute(
        outs[0].shape,
        [&](const Indices& i) {
          Expr pj = p(i[0], i[1], i[2], jv.var);
          if (dropout) pj = pj * dropout({i[0], i[1], i[2], jv.var});
          return ir::ReduceSum(pj * widen(v(i[0], kv_head(i[1]), jv.var, i[3])), {jv});
        },
        name + "_pv");
    Tensor out = ir::Compute(
        outs[0].shape,
        [&](const Indices& i) {
          Expr l = sum(i[0], i[1], i[2]);
          return CastTo(t, ir::Select::Make(l > Const(acc, 0), pv(i) / l, Const(acc, 0)));
        },
        name);
    Tensor lse = ir::Compute(
        outs[1].shape,
        [&](const Indices& i) {
          Expr l = sum(i);
          return CastTo(outs[1].type, ir::Select::Make(l > Const(acc, 0), mx(i) + ir::Log(l), inf));
        },
        name + "_1");
    return std::vector<Tensor>{out, lse};
  };
}

}  // namespace cinn_like::hlir::ops
