/// \file The two gradients of a 2-d convolution (NCHW) as ops of their own, so that a GPU runs
/// each as one cuDNN backward call (ir::LibraryCall::kConv2dBackwardData, kConv2dBackwardFilter)
/// with its algorithm chosen once per shape, as PyTorch does, where a decomposition into forward
/// convolutions handed cuDNN a filter of the whole output's size and a batch of the channels:
/// its slow indexed kernels were most of a ResNet or RegNet training step.
///
///  - conv2d_backward_data(dy [N, K, OH, OW], w [K, C/g, R, S]) -> dx [N, C, H, W]: dx[n, c, h,
///    v] = sum over k of c's group, r, s with oh = (h + pad - r * dil) / stride whole and in
///    range (likewise ow) of dy[n, k, oh, ow] * w[k, c mod C/g, r, s]; attribute `input_hw`
///    [H, W] (a strided convolution's input size is not implied by its output's);
///  - conv2d_backward_filter(x [N, C, H, W], dy [N, K, OH, OW]) -> dw [K, C/g, R, S]: dw[k, c',
///    r, s] = sum over n, oh, ow of dy[n, k, oh, ow] * x[n, g(k) * C/g + c', oh * stride + r *
///    dil - pad, ...] (zero outside x); attribute `kernel_hw` [R, S].
/// Both take the forward's strides, paddings (2 entries: symmetric), dilations and groups.
/// float16 and bfloat16 accumulate in float32. The generated computes are plain reductions:
/// they serve CPUs and the cases cuDNN declines.
#include <tuple>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using Descs = absl::StatusOr<std::vector<TensorDesc>>;
using Inputs = std::vector<const HostTensor*>;
using Tensors = absl::StatusOr<std::vector<ir::Tensor>>;

constexpr char kData[] = "conv2d_backward_data";
constexpr char kFilter[] = "conv2d_backward_filter";

/// The forward convolution's geometry, from the attributes.
struct Geometry {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  int64_t a = 0, b = 0;  // input_hw (data) or kernel_hw (filter)
};

absl::StatusOr<Geometry> ReadGeometry(const char* op, const AttributeMap& attrs,
                                      const char* size_attr) {
  Geometry g;
  auto s = ops::WindowPair(op, attrs, "strides", {1, 1}, 1);
  if (!s.ok()) return s.status();
  auto p = ops::WindowPair(op, attrs, "paddings", {0, 0}, 0);
  if (!p.ok()) return p.status();
  auto d = ops::WindowPair(op, attrs, "dilations", {1, 1}, 1);
  if (!d.ok()) return d.status();
  auto groups = GetInt(attrs, "groups", op, 1);
  if (!groups.ok()) return groups.status();
  if (*groups < 1) {
    return absl::InvalidArgumentError(absl::StrCat("op ", op, ": groups ", *groups, " < 1"));
  }
  auto size = ops::WindowPair(op, attrs, size_attr, {}, 1);
  if (!size.ok()) return size.status();
  g.sh = (*s)[0], g.sw = (*s)[1], g.ph = (*p)[0], g.pw = (*p)[1];
  g.dh = (*d)[0], g.dw = (*d)[1], g.groups = *groups, g.a = (*size)[0], g.b = (*size)[1];
  return g;
}

/// The forward's output size along one axis for input `in`, kernel `k`; 0 when the dilated
/// kernel is larger than the padded input (the forward conv2d refuses that).
int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

/// Checks shared by both ops: float dtypes alike, rank 4, static C/K/H/W, groups dividing.
absl::Status CheckOperands(const char* op, const TensorDesc& a, const char* a_name,
                           const TensorDesc& b, const char* b_name) {
  for (const auto& [t, name, k] : {std::tuple{&a, a_name, 0}, std::tuple{&b, b_name, 1}}) {
    absl::Status s = ops::CheckDType(op, k, *t, ops::DTypeClass::kFloat);
    if (!s.ok()) return s;
    if (t->shape.size() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("op ", op, ": ", name, " (input ", k, ", ",
                                                     t->ToString(), ") must have rank 4 (NCHW)"));
    }
    for (int d = 1; d < 4; ++d) {
      if (t->shape[d].is_symbolic()) {
        return absl::InvalidArgumentError(absl::StrCat("op ", op, ": ", name, " (input ", k, ", ",
                                                       t->ToString(),
                                                       ") must have static C, H, W"));
      }
    }
  }
  if (a.dtype != b.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("op ", op, ": ", a_name, " ", a.ToString(),
                                                   " and ", b_name, " ", b.ToString(),
                                                   " must have one dtype"));
  }
  return absl::OkStatus();
}

Descs InferData(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  const TensorDesc &dy = in[0], &w = in[1];
  absl::Status s = CheckOperands(kData, dy, "grad_out", w, "weight");
  if (!s.ok()) return s;
  auto g = ReadGeometry(kData, attrs, "input_hw");
  if (!g.ok()) return g.status();
  const int64_t k = w.shape[0].value, cg = w.shape[1].value;
  if (k % g->groups || dy.shape[1].value != k) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op conv2d_backward_data: grad_out ", dy.ToString(), " must have the weight's ", k,
        " output channels (weight ", w.ToString(), "), a multiple of groups ", g->groups));
  }
  const int64_t oh = OutSize(g->a, w.shape[2].value, g->sh, g->ph, g->dh);
  const int64_t ow = OutSize(g->b, w.shape[3].value, g->sw, g->pw, g->dw);
  if (oh != dy.shape[2].value || ow != dy.shape[3].value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op conv2d_backward_data: grad_out ", dy.ToString(), " is not the output of a ", g->a, "x",
        g->b, " input under weight ", w.ToString(), " (expected ", oh, "x", ow, ")"));
  }
  return std::vector<TensorDesc>{TensorDesc{
      dy.dtype, {dy.shape[0], Dim::Known(cg * g->groups), Dim::Known(g->a), Dim::Known(g->b)}}};
}

Descs InferFilter(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  const TensorDesc &x = in[0], &dy = in[1];
  absl::Status s = CheckOperands(kFilter, x, "input", dy, "grad_out");
  if (!s.ok()) return s;
  auto g = ReadGeometry(kFilter, attrs, "kernel_hw");
  if (!g.ok()) return g.status();
  const int64_t c = x.shape[1].value, k = dy.shape[1].value;
  if (c % g->groups || k % g->groups || x.shape[0] != dy.shape[0]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op conv2d_backward_filter: input ", x.ToString(), " and grad_out ", dy.ToString(),
        " need one batch and channels divisible by groups ", g->groups));
  }
  const int64_t oh = OutSize(x.shape[2].value, g->a, g->sh, g->ph, g->dh);
  const int64_t ow = OutSize(x.shape[3].value, g->b, g->sw, g->pw, g->dw);
  if (oh != dy.shape[2].value || ow != dy.shape[3].value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op conv2d_backward_filter: grad_out ", dy.ToString(), " is not the output of input ",
        x.ToString(), " under a ", g->a, "x", g->b, " kernel (expected ", oh, "x", ow, ")"));
  }
  return std::vector<TensorDesc>{TensorDesc{
      x.dtype, {Dim::Known(k), Dim::Known(c / g->groups), Dim::Known(g->a), Dim::Known(g->b)}}};
}

/// Row-major offset of (i0, i1, i2, i3) in `shape`.
int64_t At(const std::vector<int64_t>& shape, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return ((i0 * shape[1] + i1) * shape[2] + i2) * shape[3] + i3;
}

absl::Status ReferenceData(const Inputs& in, const AttributeMap& attrs,
                           std::vector<HostTensor>& outs) {
  const Geometry g = *ReadGeometry(kData, attrs, "input_hw");
  const HostTensor &dy = *in[0], &w = *in[1];
  HostTensor& dx = outs[0];
  const int64_t kg = w.shape[0] / g.groups, cg = w.shape[1];
  std::fill(dx.data.begin(), dx.data.end(), 0.0);
  for (int64_t n = 0; n < dy.shape[0]; ++n)
    for (int64_t k = 0; k < w.shape[0]; ++k)
      for (int64_t oh = 0; oh < dy.shape[2]; ++oh)
        for (int64_t ow = 0; ow < dy.shape[3]; ++ow) {
          const double grad = dy.data[At(dy.shape, n, k, oh, ow)];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t r = 0; r < w.shape[2]; ++r)
              for (int64_t s = 0; s < w.shape[3]; ++s) {
                const int64_t h = oh * g.sh - g.ph + r * g.dh, v = ow * g.sw - g.pw + s * g.dw;
                if (h < 0 || h >= g.a || v < 0 || v >= g.b) continue;
                dx.data[At(dx.shape, n, k / kg * cg + c, h, v)] +=
                    grad * w.data[At(w.shape, k, c, r, s)];
              }
        }
  return absl::OkStatus();
}

absl::Status ReferenceFilter(const Inputs& in, const AttributeMap& attrs,
                             std::vector<HostTensor>& outs) {
  const Geometry g = *ReadGeometry(kFilter, attrs, "kernel_hw");
  const HostTensor &x = *in[0], &dy = *in[1];
  HostTensor& dw = outs[0];
  const int64_t kg = dy.shape[1] / g.groups, cg = dw.shape[1];
  std::fill(dw.data.begin(), dw.data.end(), 0.0);
  for (int64_t n = 0; n < x.shape[0]; ++n)
    for (int64_t k = 0; k < dy.shape[1]; ++k)
      for (int64_t oh = 0; oh < dy.shape[2]; ++oh)
        for (int64_t ow = 0; ow < dy.shape[3]; ++ow) {
          const double grad = dy.data[At(dy.shape, n, k, oh, ow)];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t r = 0; r < g.a; ++r)
              for (int64_t s = 0; s < g.b; ++s) {
                const int64_t h = oh * g.sh - g.ph + r * g.dh, v = ow * g.sw - g.pw + s * g.dw;
                if (h < 0 || h >= x.shape[2] || v < 0 || v >= x.shape[3]) continue;
                dw.data[At(dw.shape, k, c, r, s)] +=
                    grad * x.data[At(x.shape, n, k / kg * cg + c, h, v)];
              }
        }
  return absl::OkStatus();
}

ir::Expr I(int64_t v) { return ir::Expr(static_cast<int>(v)); }

/// `t` at (n, c, h, v) times `factor` where (h, v) is in range (and `extra` holds), else 0: the
/// indices are clamped so that the load never leaves the buffer (a Select evaluates both
/// sides), and the product is inside the Select so that an infinite factor beside a padding
/// position adds nothing (0 * inf would be NaN; the reference skips such terms).
ir::Expr Inside(const ir::Tensor& t, ir::Expr n, ir::Expr c, ir::Expr h, ir::Expr v, ir::Expr extra,
                const ir::Type& acc, const ir::Expr& factor) {
  ir::Expr hs = t->shape[2], vs = t->shape[3];
  ir::Expr in = h >= 0 && h < hs && v >= 0 && v < vs;
  if (extra.defined()) in = extra && in;
  ir::Expr hc = ir::max(ir::min(h, hs - 1), 0), vc = ir::max(ir::min(v, vs - 1), 0);
  return ir::Select::Make(in, ops::CastTo(acc, t(n, c, hc, vc)) * factor, ops::Const(acc, 0));
}

Tensors ComputeData(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                    const std::vector<ComputeOutput>& outs, const std::string& name) {
  auto geo = ReadGeometry(kData, attrs, "input_hw");
  if (!geo.ok()) return geo.status();
  const Geometry g = *geo;
  const ir::Tensor &dy = in[0], &w = in[1];
  const int64_t kg = *ir::AsConstInt(w->shape[0]) / g.groups;
  const int64_t cg = *ir::AsConstInt(w->shape[1]);
  const ir::Type t = outs[0].type, acc = t.is_low_precision_float() ? ir::Float(32) : t;
  ir::IterVar rk = ir::ReduceAxis(I(kg), "rk");
  ir::IterVar rr = ir::ReduceAxis(w->shape[2], "rr");
  ir::IterVar rs = ir::ReduceAxis(w->shape[3], "rs");
  ir::Tensor sum = ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr k = i[1] / I(cg) * I(kg) + rk.var;
        // h = oh * sh - ph + r * dh: oh = (h + ph - r * dh) / sh where that divides exactly.
        ir::Expr nh = i[2] + I(g.ph) - rr.var * I(g.dh), nv = i[3] + I(g.pw) - rs.var * I(g.dw);
        ir::Expr whole = nh >= 0 && nv >= 0 && nh % I(g.sh) == 0 && nv % I(g.sw) == 0;
        ir::Expr weight = ops::CastTo(acc, w(k, i[1] % I(cg), rr.var, rs.var));
        return ir::ReduceSum(Inside(dy, i[0], k, nh / I(g.sh), nv / I(g.sw), whole, acc, weight),
                             {rk, rr, rs});
      },
      acc == t ? name : name + "_acc");
  if (acc == t) return std::vector<ir::Tensor>{sum};
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape, [&](const std::vector<ir::Expr>& i) { return ops::CastTo(t, sum(i)); }, name)};
}

Tensors ComputeFilter(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                      const std::vector<ComputeOutput>& outs, const std::string& name) {
  auto geo = ReadGeometry(kFilter, attrs, "kernel_hw");
  if (!geo.ok()) return geo.status();
  const Geometry g = *geo;
  const ir::Tensor &x = in[0], &dy = in[1];
  const int64_t kg = *ir::AsConstInt(dy->shape[1]) / g.groups;
  const int64_t cg = *ir::AsConstInt(x->shape[1]) / g.groups;
  const ir::Type t = outs[0].type, acc = t.is_low_precision_float() ? ir::Float(32) : t;
  ir::IterVar rn = ir::ReduceAxis(dy->shape[0], "rn");
  ir::IterVar rh = ir::ReduceAxis(dy->shape[2], "rh");
  ir::IterVar rv = ir::ReduceAxis(dy->shape[3], "rv");
  ir::Tensor sum = ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr c = i[0] / I(kg) * I(cg) + i[1];
        ir::Expr h = rh.var * I(g.sh) - I(g.ph) + i[2] * I(g.dh);
        ir::Expr v = rv.var * I(g.sw) - I(g.pw) + i[3] * I(g.dw);
        ir::Expr grad = ops::CastTo(acc, dy(rn.var, i[0], rh.var, rv.var));
        return ir::ReduceSum(Inside(x, rn.var, c, h, v, ir::Expr(), acc, grad), {rn, rh, rv});
      },
      acc == t ? name : name + "_acc");
  if (acc == t) return std::vector<ir::Tensor>{sum};
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape, [&](const std::vector<ir::Expr>& i) { return ops::CastTo(t, sum(i)); }, name)};
}

}  // namespace

void RegisterConvBackwardOps(OpRegistry& r) {
  OpDef data{kData, OpPattern::kOutFusible, 2, 2, 1, InferData, ReferenceData, ComputeData};
  data.extern_compute = ops::ConvBackwardExternCompute(/*filter=*/false);
  r.Register(std::move(data));
  OpDef filter{kFilter,         OpPattern::kOutFusible, 2, 2, 1, InferFilter,
               ReferenceFilter, ComputeFilter};
  filter.extern_compute = ops::ConvBackwardExternCompute(/*filter=*/true);
  r.Register(std::move(filter));
}

}  // namespace cinn_like::hlir
