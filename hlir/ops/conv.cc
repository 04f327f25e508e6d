/// \file Sliding-window ops on NCHW tensors: conv2d (PyTorch semantics: strides, symmetric or
/// per-side paddings, dilations, groups, optional bias; out-fusible) and max_pool2d /
/// avg_pool2d (kernel_size, strides defaulting to the kernel, paddings, ceil_mode false;
/// avg counts the padding by default as PyTorch does). The pools are kReduction: their
/// computes are a ReduceMax / ReduceSum over the window, which the graph compiler schedules
/// like any reduction (it is not a pure index mapping, so kInjective would not describe it).
///
/// Paddings are [top/bottom, left/right] (2 entries, symmetric) or [top, bottom, left, right]
/// (4 entries, Paddle's order). H, W and C must be static; N may be symbolic.
///
/// conv2d also takes `data_format` "NHWC" (channels last: x [N, H, W, C], weight [O, KH, KW,
/// C/groups], y [N, OH, OW, O], cuDNN's fast layout for 16-bit types), which the conv layout
/// pass (hlir/pass/conv_layout.h) introduces; its inference, reference and compute are the
/// NCHW ones through permuted dims.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using ops::CastTo;
using ops::DTypeClass;
using ops::Widen;
using Descs = absl::StatusOr<std::vector<TensorDesc>>;
using Inputs = std::vector<const HostTensor*>;

/// The geometry of a 2-d window: kernel, stride, dilation and the four paddings.
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  /// Output size along H (W) for an input of `h` (`w`); may be <= 0 when the window does not fit.
  int64_t OutH(int64_t h) const { return (h + top + bottom - dh * (kh - 1) - 1) / sh + 1; }
  int64_t OutW(int64_t w) const { return (w + left + right - dw * (kw - 1) - 1) / sw + 1; }
};

using ops::kMaxWindowAttr;

/// Reads paddings ([2] symmetric or [4] top, bottom, left, right; default zeros) into `w`.
absl::Status ReadPaddings(const std::string& op, const AttributeMap& attrs, Window& w) {
  auto p = GetInts(attrs, "paddings", op, std::vector<int64_t>{0, 0});
  if (!p.ok()) return p.status();
  bool ok = p->size() == 2 || p->size() == 4;
  for (int64_t v : *p) ok = ok && v >= 0 && v <= kMaxWindowAttr;
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op ", op, ": attribute 'paddings' is [", absl::StrJoin(*p, ", "),
        "], expected 2 (symmetric) or 4 (top, bottom, left, right) entries 0 to ", kMaxWindowAttr));
  }
  if (p->size() == 2) {
    w.top = w.bottom = (*p)[0];
    w.left = w.right = (*p)[1];
  } else {
    w.top = (*p)[0], w.bottom = (*p)[1], w.left = (*p)[2], w.right = (*p)[3];
  }
  return absl::OkStatus();
}

/// Checks an NCHW input: float dtype, rank 4, static C, H, W.
absl::Status CheckNCHW(const std::string& op, int i, const TensorDesc& x) {
  absl::Status s = ops::CheckDType(op, i, x, DTypeClass::kFloat);
  if (!s.ok()) return s;
  if (x.shape.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": input ", i, " (", x.ToString(), ") must be NCHW (rank 4)"));
  }
  for (int d = 1; d < 4; ++d) {
    if (x.shape[d].is_symbolic()) {
      return absl::InvalidArgumentError(absl::StrCat("op ", op, ": input ", i, " (", x.ToString(),
                                                     ") needs static C, H and W for now"));
    }
  }
  return absl::OkStatus();
}

/// The output [N, channels, OH, OW], or an error when the (dilated) kernel is larger than the
/// padded input.
absl::StatusOr<Shape> WindowOutput(const std::string& op, const TensorDesc& x, const Window& w,
                                   Dim channels) {
  int64_t h = x.shape[2].value, wd = x.shape[3].value;
  int64_t eh = w.dh * (w.kh - 1) + 1, ew = w.dw * (w.kw - 1) + 1;
  if (h + w.top + w.bottom < eh || wd + w.left + w.right < ew) {
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": the kernel (", eh, " x ", ew,
                     " with dilation) is larger than the padded input ", h + w.top + w.bottom,
                     " x ", wd + w.left + w.right, " of ", x.ToString()));
  }
  return Shape{x.shape[0], channels, Dim::Known(w.OutH(h)), Dim::Known(w.OutW(wd))};
}

// ----------------------------------------------------------------------------------------------
// conv2d(x [N, C, H, W], weight [O, C/groups, KH, KW], [bias [O]])

absl::StatusOr<Window> ConvWindow(const AttributeMap& attrs) {
  const std::string op = "conv2d";
  Window w;
  auto s = ops::WindowPair(op, attrs, "strides", {1, 1}, 1);
  if (!s.ok()) return s.status();
  auto d = ops::WindowPair(op, attrs, "dilations", {1, 1}, 1);
  if (!d.ok()) return d.status();
  w.sh = (*s)[0], w.sw = (*s)[1], w.dh = (*d)[0], w.dw = (*d)[1];
  absl::Status st = ReadPaddings(op, attrs, w);
  if (!st.ok()) return st;
  return w;
}

/// Whether conv2d's `data_format` is "NHWC" (false for "NCHW", the default).
absl::StatusOr<bool> IsChannelsLast(const AttributeMap& attrs) {
  auto f = GetString(attrs, "data_format", "conv2d", "NCHW");
  if (!f.ok()) return f.status();
  if (*f != "NCHW" && *f != "NHWC") {
    return absl::InvalidArgumentError(absl::StrCat("op conv2d: attribute 'data_format' is \"", *f,
                                                   "\", expected \"NCHW\" or \"NHWC\""));
  }
  return *f == "NHWC";
}

/// Dim d of the NCHW view of a channels-last rank-4 tensor is its dim kFromNhwc[d]; dim d of
/// the channels-last form of an NCHW tensor is its dim kFromNchw[d].
constexpr int kFromNhwc[4] = {0, 3, 1, 2};
constexpr int kFromNchw[4] = {0, 2, 3, 1};

Shape Permuted(const Shape& s, const int (&from)[4]) {
  return s.size() == 4 ? Shape{s[from[0]], s[from[1]], s[from[2]], s[from[3]]} : s;
}
TensorDesc Permuted(const TensorDesc& d, const int (&from)[4]) {
  return TensorDesc{d.dtype, Permuted(d.shape, from)};
}

/// `t` with its dims permuted (t's dim from[d] becomes dim d).
HostTensor Permuted(const HostTensor& t, const int (&from)[4]) {
  std::vector<int64_t> shape{t.shape[from[0]], t.shape[from[1]], t.shape[from[2]],
                             t.shape[from[3]]};
  HostTensor out(t.dtype, shape);
  const std::vector<int64_t> strides = RowMajorStrides(t.shape);
  int64_t flat = 0;
  ForEachIndex(shape, [&](const std::vector<int64_t>& i) {
    int64_t src = 0;
    for (int d = 0; d < 4; ++d) src += i[d] * strides[from[d]];
    out.data[flat++] = t.data[src];
  });
  return out;
}

Descs InferConv2dNchw(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  const std::string op = "conv2d";
  absl::Status s = CheckNCHW(op, 0, in[0]);
  if (!s.ok()) return s;
  s = ops::CheckSameDType(op, in);
  if (!s.ok()) return s;
  const TensorDesc &x = in[0], &wt = in[1];
  if (wt.shape.size() != 4 || !IsStatic(wt.shape)) {
    return absl::InvalidArgumentError(absl::StrCat("op conv2d: weight (input 1, ", wt.ToString(),
                                                   ") must be static [out_channels, in_channels / "
                                                   "groups, kh, kw]"));
  }
  auto groups = GetInt(attrs, "groups", op, 1);
  if (!groups.ok()) return groups.status();
  int64_t c = x.shape[1].value, o = wt.shape[0].value, g = *groups;
  if (g < 1 || c % g != 0 || o % g != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op conv2d: groups = ", g, " must be >= 1 and divide both the input channels (", c,
        " of x ", x.ToString(), ") and the output channels (", o, " of weight ", wt.ToString(),
        ")"));
  }
  if (wt.shape[1].value != c / g) {
    return absl::InvalidArgumentError(absl::StrCat("op conv2d: channels mismatch: x ", x.ToString(),
                                                   " has ", c, " channels, so with groups = ", g,
                                                   " weight ", wt.ToString(), " needs ", c / g,
                                                   " in dim 1, not ", wt.shape[1].value));
  }
  if (in.size() == 3 && in[2].shape != Shape{wt.shape[0]}) {
    return absl::InvalidArgumentError(absl::StrCat("op conv2d: bias (input 2, ", in[2].ToString(),
                                                   ") must have shape [", o, "]"));
  }
  auto w = ConvWindow(attrs);
  if (!w.ok()) return w.status();
  w->kh = wt.shape[2].value, w->kw = wt.shape[3].value;
  auto out = WindowOutput(op, x, *w, wt.shape[0]);
  if (!out.ok()) return out.status();
  return std::vector<TensorDesc>{TensorDesc{x.dtype, *out}};
}

Descs InferConv2d(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  auto nhwc = IsChannelsLast(attrs);
  if (!nhwc.ok()) return nhwc.status();
  // "activation" (none, relu, gelu_tanh): applied after the bias (FoldConvEpilogue).
  auto epilogue = ops::GetMatmulEpilogue(in.size(), attrs, "conv2d");
  if (!epilogue.ok()) return epilogue.status();
  if (!*nhwc) return InferConv2dNchw(in, attrs);
  // The NCHW view of every operand (a bias is 1-d), and the channels-last form of the result.
  std::vector<TensorDesc> view = in;
  for (int k = 0; k < 2 && k < static_cast<int>(in.size()); ++k) {
    if (in[k].shape.size() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("op conv2d: input ", k, " (", in[k].ToString(), ") must be NHWC (rank 4)"));
    }
    view[k] = Permuted(in[k], kFromNhwc);
  }
  auto out = InferConv2dNchw(view, attrs);
  if (!out.ok()) return out.status();
  return std::vector<TensorDesc>{Permuted((*out)[0], kFromNchw)};
}

absl::Status ReferenceConv2dNchw(const Inputs& in, const AttributeMap& attrs,
                                 std::vector<HostTensor>& outs) {
  Window w = *ConvWindow(attrs);
  const HostTensor &x = *in[0], &wt = *in[1];
  HostTensor& o = outs[0];
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t oc = o.shape[1], oh = o.shape[2], ow = o.shape[3];
  int64_t g = *GetInt(attrs, "groups", "conv2d", 1), cg = c / g, og = oc / g;
  w.kh = wt.shape[2], w.kw = wt.shape[3];
  int64_t flat = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t f = 0; f < oc; ++f) {
      int64_t c0 = (f / og) * cg;
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double acc = in.size() == 3 ? in[2]->data[f] : 0.0;
          for (int64_t k = 0; k < cg; ++k) {
            for (int64_t p = 0; p < w.kh; ++p) {
              int64_t y = i * w.sh - w.top + p * w.dh;
              if (y < 0 || y >= h) continue;
              for (int64_t q = 0; q < w.kw; ++q) {
                int64_t xx = j * w.sw - w.left + q * w.dw;
                if (xx < 0 || xx >= wd) continue;
                acc += x.data[((b * c + c0 + k) * h + y) * wd + xx] *
                       wt.data[((f * cg + k) * w.kh + p) * w.kw + q];
              }
            }
          }
          o.data[flat++] = acc;
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ReferenceConv2dLayout(const Inputs& in, const AttributeMap& attrs,
                                   std::vector<HostTensor>& outs) {
  if (!*IsChannelsLast(attrs)) return ReferenceConv2dNchw(in, attrs, outs);
  HostTensor x = Permuted(*in[0], kFromNhwc), wt = Permuted(*in[1], kFromNhwc);
  Inputs view{&x, &wt};
  if (in.size() == 3) view.push_back(in[2]);
  const std::vector<int64_t>& o = outs[0].shape;
  std::vector<HostTensor> y{HostTensor(outs[0].dtype, {o[0], o[3], o[1], o[2]})};
  absl::Status s = ReferenceConv2dNchw(view, attrs, y);
  if (s.ok()) outs[0] = Permuted(y[0], kFromNchw);
  return s;
}

/// The convolution (with its bias), then the epilogue's activation.
absl::Status ReferenceConv2d(const Inputs& in, const AttributeMap& attrs,
                             std::vector<HostTensor>& outs) {
  absl::Status s = ReferenceConv2dLayout(in, attrs, outs);
  if (!s.ok()) return s;
  auto epilogue = ops::GetMatmulEpilogue(in.size(), attrs, "conv2d");
  if (!epilogue.ok()) return epilogue.status();
  return ops::ReferenceActivation(*epilogue, outs[0]);
}

/// x(n, c, h, w) with (h, w) possibly in the padding: the indices are clamped into the tensor
/// so that the load never leaves the buffer (both branches of a Select are evaluated), and the
/// Select yields `pad` outside it. x is NCHW, or NHWC when `nhwc`.
ir::Expr PaddedRead(const ir::Tensor& x, ir::Expr n, ir::Expr c, ir::Expr h, ir::Expr w,
                    ir::Expr pad, bool nhwc = false) {
  ir::Expr hs = x->shape[nhwc ? 1 : 2], ws = x->shape[nhwc ? 2 : 3];
  ir::Expr inside = h >= 0 && h < hs && w >= 0 && w < ws;
  ir::Expr hc = ir::max(ir::min(h, hs - 1), 0), wc = ir::max(ir::min(w, ws - 1), 0);
  ir::Expr v = nhwc ? x(n, hc, wc, c) : x(n, c, hc, wc);
  return ir::Select::Make(inside, v, pad);
}

absl::StatusOr<std::vector<ir::Tensor>> ComputeConv2d(const std::vector<ir::Tensor>& in,
                                                      const AttributeMap& attrs,
                                                      const std::vector<ComputeOutput>& outs,
                                                      const std::string& name) {
  auto w = ConvWindow(attrs);
  if (!w.ok()) return w.status();
  auto groups = GetInt(attrs, "groups", "conv2d", 1);
  if (!groups.ok()) return groups.status();
  auto nhwc = IsChannelsLast(attrs);
  if (!nhwc.ok()) return nhwc.status();
  const bool last = *nhwc;
  const ir::Tensor &x = in[0], &wt = in[1];
  // The weight is [O, C/groups, KH, KW], or [O, KH, KW, C/groups] channels last.
  const int c_dim = last ? 3 : 1, kh_dim = last ? 1 : 2, kw_dim = last ? 2 : 3;
  const int64_t* cg = ir::AsConstInt(wt->shape[c_dim]);
  const int64_t* oc = ir::AsConstInt(wt->shape[0]);
  if (!cg || !oc) return absl::InvalidArgumentError("op conv2d: the weight's shape must be static");
  int og = static_cast<int>(*oc / *groups);
  ir::IterVar rc = ir::ReduceAxis(wt->shape[c_dim], "rc");
  ir::IterVar rh = ir::ReduceAxis(wt->shape[kh_dim], "rh");
  ir::IterVar rw = ir::ReduceAxis(wt->shape[kw_dim], "rw");
  // Output index i as (n, o, oh, ow).
  auto nchw = [last](const std::vector<ir::Expr>& i) {
    return last ? std::vector<ir::Expr>{i[0], i[3], i[1], i[2]} : i;
  };
  ir::Type t = outs[0].type;
  const Window win = *w;
  bool has_bias = in.size() == 3;
  auto epilogue = ops::GetMatmulEpilogue(in.size(), attrs, "conv2d");
  if (!epilogue.ok()) return epilogue.status();
  const bool act = !epilogue->op.empty();
  // float16 and bfloat16 accumulate in float32 and round once, after the bias (as matmul and
  // PyTorch's kernels do; a 16-bit accumulator rounded at every step).
  bool widen = t.is_low_precision_float();
  ir::Tensor acc = ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& out_index) {
        const std::vector<ir::Expr> i = nchw(out_index);
        ir::Expr c = i[1] / og * static_cast<int>(*cg) + rc.var;
        ir::Expr h = i[2] * static_cast<int>(win.sh) - static_cast<int>(win.top) +
                     rh.var * static_cast<int>(win.dh);
        ir::Expr v = i[3] * static_cast<int>(win.sw) - static_cast<int>(win.left) +
                     rw.var * static_cast<int>(win.dw);
        ir::Expr weight =
            last ? wt(i[1], rh.var, rw.var, rc.var) : wt(i[1], rc.var, rh.var, rw.var);
        return ir::ReduceSum(
            Widen(PaddedRead(x, i[0], c, h, v, ir::MakeConst(t, 0), last)) * Widen(weight),
            {rc, rh, rw});
      },
      has_bias || widen || act ? name + "_acc" : name);
  if (!has_bias && !widen && !act) return std::vector<ir::Tensor>{acc};
  if (!act) {
    return std::vector<ir::Tensor>{ir::Compute(
        outs[0].shape,
        [&](const std::vector<ir::Expr>& i) {
          ir::Expr v = acc(i);
          if (has_bias) v = v + Widen(in[2](nchw(i)[1]));
          return CastTo(t, v);
        },
        name)};
  }
  // The epilogue in the accumulator's type, then the cast (as a matmul's epilogue).
  auto done = ops::ApplyEpilogue(acc, *epilogue, has_bias ? in[2] : ir::Tensor(), name,
                                 [&](const std::vector<ir::Expr>& i) { return nchw(i)[1]; });
  if (!done.ok()) return done.status();
  return std::vector<ir::Tensor>{ops::CastBack(*done, t, outs[0].shape, name)};
}

// ----------------------------------------------------------------------------------------------
// max_pool2d / avg_pool2d (x [N, C, H, W])

absl::StatusOr<Window> PoolWindow(const std::string& op, const AttributeMap& attrs) {
  Window w;
  auto k = ops::WindowPair(op, attrs, "kernel_size", {}, 1);
  if (!k.ok()) return k.status();
  auto s = ops::WindowPair(op, attrs, "strides", *k, 1);
  if (!s.ok()) return s.status();
  w.kh = (*k)[0], w.kw = (*k)[1], w.sh = (*s)[0], w.sw = (*s)[1];
  absl::Status st = ReadPaddings(op, attrs, w);
  if (!st.ok()) return st;
  auto ceil_mode = GetBool(attrs, "ceil_mode", op, false);
  if (!ceil_mode.ok()) return ceil_mode.status();
  if (*ceil_mode)
    return absl::UnimplementedError(absl::StrCat("op ", op, ": ceil_mode = true is not supported"));
  // PyTorch's rule; it also keeps every window at least one real element wide.
  if (std::max(w.top, w.bottom) * 2 > w.kh || std::max(w.left, w.right) * 2 > w.kw) {
    return absl::InvalidArgumentError(absl::StrCat("op ", op, ": paddings (", w.top, ", ", w.bottom,
                                                   ", ", w.left, ", ", w.right,
                                                   ") must be at most half of "
                                                   "the kernel size ",
                                                   w.kh, " x ", w.kw));
  }
  return w;
}

void RegisterPool(OpRegistry& r, const std::string& name, bool is_max) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::kReduction;
  def.infer = [name](const std::vector<TensorDesc>& in, const AttributeMap& attrs) -> Descs {
    absl::Status s = CheckNCHW(name, 0, in[0]);
    if (!s.ok()) return s;
    auto w = PoolWindow(name, attrs);
    if (!w.ok()) return w.status();
    auto count = GetBool(attrs, "count_include_pad", name, true);
    if (!count.ok()) return count.status();
    auto out = WindowOutput(name, in[0], *w, in[0].shape[1]);
    if (!out.ok()) return out.status();
    return std::vector<TensorDesc>{TensorDesc{in[0].dtype, *out}};
  };
  def.reference = [name, is_max](const Inputs& in, const AttributeMap& attrs,
                                 std::vector<HostTensor>& outs) -> absl::Status {
    Window w = *PoolWindow(name, attrs);
    bool count_pad = *GetBool(attrs, "count_include_pad", name, true);
    const HostTensor& x = *in[0];
    HostTensor& o = outs[0];
    int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], wd = x.shape[3];
    int64_t oh = o.shape[2], ow = o.shape[3], flat = 0;
    for (int64_t pl = 0; pl < planes; ++pl) {
      const double* src = x.data.data() + pl * h * wd;
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
          int64_t real = 0;
          for (int64_t p = 0; p < w.kh; ++p) {
            for (int64_t q = 0; q < w.kw; ++q) {
              int64_t y = i * w.sh - w.top + p, xx = j * w.sw - w.left + q;
              if (y < 0 || y >= h || xx < 0 || xx >= wd) continue;  // -inf or 0: no effect
              double v = src[y * wd + xx];
              ++real;
              acc = !is_max ? acc + v : (std::isnan(acc) || std::isnan(v)) ? NAN : std::max(acc, v);
            }
          }
          o.data[flat++] = is_max ? acc : acc / static_cast<double>(count_pad ? w.kh * w.kw : real);
        }
      }
    }
    return absl::OkStatus();
  };
  def.compute = [name, is_max](
                    const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                    const std::vector<ComputeOutput>& outs,
                    const std::string& tname) -> absl::StatusOr<std::vector<ir::Tensor>> {
    auto win = PoolWindow(name, attrs);
    if (!win.ok()) return win.status();
    auto count_pad = GetBool(attrs, "count_include_pad", name, true);
    if (!count_pad.ok()) return count_pad.status();
    const Window w = *win;
    const ir::Tensor& x = in[0];
    ir::Type t = outs[0].type;
    ir::IterVar rh = ir::ReduceAxis(static_cast<int>(w.kh), "rh");
    ir::IterVar rw = ir::ReduceAxis(static_cast<int>(w.kw), "rw");
    auto h0 = [&](ir::Expr i) { return i * static_cast<int>(w.sh) - static_cast<int>(w.top); };
    auto w0 = [&](ir::Expr j) { return j * static_cast<int>(w.sw) - static_cast<int>(w.left); };
    ir::Expr pad = is_max ? ir::ReduceInit(ir::ReduceKind::kMax, t) : ir::MakeConst(t, 0);
    ir::Tensor acc = ir::Compute(
        outs[0].shape,
        [&](const std::vector<ir::Expr>& i) {
          ir::Expr v = PaddedRead(x, i[0], i[1], h0(i[2]) + rh.var, w0(i[3]) + rw.var, pad);
          // The average's sum of float16/bfloat16 accumulates in float32 (see conv2d).
          return is_max ? ir::ReduceMax(v, {rh, rw}) : ir::ReduceSum(Widen(v), {rh, rw});
        },
        is_max ? tname : tname + "_sum");
    if (is_max) return std::vector<ir::Tensor>{acc};
    bool count = *count_pad;
    ir::Type at = acc->dtype;
    return std::vector<ir::Tensor>{ir::Compute(
        outs[0].shape,
        [&](const std::vector<ir::Expr>& i) {
          if (count) return CastTo(t, acc(i) / ir::MakeConst(at, static_cast<double>(w.kh * w.kw)));
          // The window's part inside the input.
          ir::Expr hs = x->shape[2], ws = x->shape[3];
          ir::Expr rows = ir::min(h0(i[2]) + static_cast<int>(w.kh), hs) - ir::max(h0(i[2]), 0);
          ir::Expr cols = ir::min(w0(i[3]) + static_cast<int>(w.kw), ws) - ir::max(w0(i[3]), 0);
          return CastTo(t, acc(i) / ir::Cast::Make(at, rows * cols));
        },
        tname)};
  };
  r.Register(std::move(def));
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  OpDef conv{"conv2d",        OpPattern::kOutFusible, 2, 3, 1, InferConv2d,
             ReferenceConv2d, ComputeConv2d};
  conv.extern_compute = ops::Conv2dExternCompute();
  r.Register(std::move(conv));
  RegisterPool(r, "max_pool2d", true);
  RegisterPool(r, "avg_pool2d", false);
}

}  // namespace cinn_like::hlir
