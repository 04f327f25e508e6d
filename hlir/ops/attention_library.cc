/// \file attention on a target with a matmul library call but no fused attention kernel (x86:
/// oneDNN): the scores q kᵀ (`<name>_qk`) and the product p v (the output) are two batched
/// library matmuls, and the masked softmax between them (with its dropout) is generated: the
/// row max (`<name>_max`), the row sum of the exponentials (`<name>_sum`) and the normalized
/// probabilities (`<name>_p`), which the CPU row tactic computes row by row while the row is in
/// cache. The decomposed compute (attention_compute.cc) writes the two products as generated
/// loop nests, several times slower than the library's GEMMs at a transformer's sizes.
///
/// Grouped-query attention needs no gather: q [B, H, Lq, D] with H = Hkv * G is, stored, the
/// batch of B * Hkv matrices of G * Lq rows that each meet one key/value head, so both products
/// are plain strided batches of B * Hkv. Only float32 is taken: the library accumulates in it,
/// as the op asks; other dtypes keep the decomposed compute.
#include <cmath>

#include "hlir/ops/attention.h"
#include "hlir/ops/compute_util.h"
#include "ir/library_calls.h"
#include "ir/math.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Made = absl::StatusOr<ExternTensors>;

constexpr int64_t kFloat32Code = 0;  // the matmul call's dtype code (ir::LibraryCall::kMatmul)

/// A row-major product C = A B (B read transposed when `trans_b`) over a strided batch, as the
/// arguments of ir::LibraryCall::kMatmul after its pointers.
std::vector<Expr> ProductInts(const Expr& batch, const Expr& m, const Expr& n, const Expr& k,
                              bool trans_b) {
  ir::MatmulArgs<Expr> a;
  a.has_bias = Expr(int64_t{0}), a.dtype = Expr(kFloat32Code);
  a.batch = batch, a.m = m, a.n = n, a.k = k;
  a.trans_a = Expr(int64_t{0}), a.trans_b = Expr(int64_t{trans_b});
  a.batch_stride_a = m * k, a.batch_stride_b = k * n;
  return ir::ArgList(a);
}

/// The extern tensor computing `a` times `b` by `function` with `ints` (ProductInts).
Tensor Product(const std::string& name, const std::vector<Expr>& shape, const Tensor& a,
               const Tensor& b, const std::string& function, const std::vector<Expr>& ints) {
  return ir::ExternTensor(
      name, ir::Float(32), shape, {a, b},
      [=](const std::vector<ir::Buffer>& in, const ir::Buffer& c) {
        std::vector<Expr> args{in[0]->data, in[1]->data, c->data, c->data};  // a, b, bias, c
        args.insert(args.end(), ints.begin(), ints.end());
        return ir::ExternCall(function, args);
      });
}

bool IsZero(const Expr& e) { return ir::IsConstInt(e, 0); }

}  // namespace

ExternComputeFn AttentionMatmulCompute() {
  return [](const ir::Target& target, const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Made {
    auto perms = ReadAttentionLayout(attrs, "attention");
    if (!perms.ok()) return perms.status();
    if (!perms->identity()) return Declined("the library matmuls take [B, H, L, D] operands");
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    if (q->dtype != ir::Float(32) || outs[0].type != ir::Float(32)) {
      return Declined("the library matmuls are taken for float32 attention only");
    }
    const Expr batch = q->shape[0], heads = q->shape[1], lq = q->shape[2], lk = k->shape[2];
    const Expr kv_heads = k->shape[1], d = q->shape[3], dv = v->shape[3];
    if (IsZero(lk) || IsZero(d)) return Declined("a product has no terms");
    const int64_t* d_const = ir::AsConstInt(d);
    auto a = ReadAttentionAttrs(attrs, d_const ? *d_const : -1, in.size());
    if (!a.ok()) return a.status();
    const int64_t *h_const = ir::AsConstInt(heads), *hkv_const = ir::AsConstInt(kv_heads);
    const Expr group = h_const && hkv_const && *hkv_const > 0
                           ? ir::IndexConst(*h_const / *hkv_const)
                           : heads / kv_heads;
    // Both products: B * Hkv matrices of G * Lq rows.
    const Expr mats = AsInt64(batch) * AsInt64(kv_heads), rows = AsInt64(group) * AsInt64(lq);
    const std::vector<Expr> qk_ints = ProductInts(mats, rows, AsInt64(lk), AsInt64(d), true);
    const std::vector<Expr> pv_ints = ProductInts(mats, rows, AsInt64(dv), AsInt64(lk), false);
    auto qk_call = FindLibrary(target, ir::LibraryCall::kMatmul, qk_ints);
    if (!qk_call.ok()) return Declined(std::string(qk_call.status().message()));
    auto pv_call = FindLibrary(target, ir::LibraryCall::kMatmul, pv_ints);
    if (!pv_call.ok()) return Declined(std::string(pv_call.status().message()));

    const ir::Type f32 = ir::Float(32);
    const Expr inf = Const(f32, INFINITY);
    Tensor qk = Product(name + "_qk", {batch, heads, lq, lk}, q, k, qk_call->function, qk_ints);
    auto score = MaskedScore(qk, *a, in, f32);
    ir::IterVar j = ir::ReduceAxis(lk, "j");
    Tensor mx = ir::Compute(
        {batch, heads, lq},
        [&](const Indices& i) {
          return ir::ReduceMax(score({i[0], i[1], i[2], j.var}), {j});
        },
        name + "_max");
    // A row with no kept key has max -inf: its exponentials are exp(-inf - 0) = 0, its sum 0.
    auto exp_score = [&](const Indices& i) {
      Expr m = mx(i[0], i[1], i[2]);
      return ir::Exp(score(i) - ir::Select::Make(m == -inf, Const(f32, 0), m));
    };
    ir::IterVar js = ir::ReduceAxis(lk, "j");
    Tensor sum = ir::Compute(
        {batch, heads, lq},
        [&](const Indices& i) {
          return ir::ReduceSum(exp_score({i[0], i[1], i[2], js.var}), {js});
        },
        name + "_sum");
    // Normalized before p v, so that the second product is the output: 0 on a row without keys;
    // times the dropout factor with dropout.
    auto dropout = DropoutFactor(*a, in, f32);
    Tensor p = ir::Compute(
        {batch, heads, lq, lk},
        [&](const Indices& i) {
          Expr l = sum(i[0], i[1], i[2]);
          Expr p = exp_score(i) / l;
          if (dropout) p = p * dropout(i);
          return ir::Select::Make(l > Const(f32, 0), p, Const(f32, 0));
        },
        name + "_p");
    Tensor out = Product(name, outs[0].shape, p, v, pv_call->function, pv_ints);
    Tensor lse = ir::Compute(
        outs[1].shape,
        [&](const Indices& i) {
          Expr l = sum(i);
          return ir::Select::Make(l > Const(f32, 0), mx(i) + ir::Log(l), inf);
        },
        name + "_1");
    return MadeBy(*pv_call, {out, lse});
  };
}

}  // namespace cinn_like::hlir::ops
