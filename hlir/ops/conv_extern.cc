/// \file conv2d as a library call (an extern tensor calling the target's conv2d function,
/// ir::LibraryCall::kConv2d: cuDNN on NVGPU, oneDNN on x86; kConv2dChannelsLast for the
/// "NHWC" data_format, cuDNN only; kConv2dEpilogue with an activation, oneDNN only): forward
/// with strides, symmetric paddings, dilations, groups, the bias and the activation in the same
/// call. Other cases (asymmetric paddings, other dtypes), and those the library refuses, are
/// declined: the generated compute serves them. The convolution's two gradients
/// (hlir/ops/conv_backward.cc) are one call each, kConv2dBackwardData and kConv2dBackwardFilter.
#include "hlir/ops/compute_util.h"
#include "ir/library_calls.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Made = absl::StatusOr<ExternTensors>;

/// A 2-entry attribute as ints, or `fallback` when absent; false when malformed.
bool ReadPair(const AttributeMap& attrs, const std::string& name, std::vector<int64_t> fallback,
              std::vector<int64_t>* out) {
  auto v = GetInts(attrs, name, "conv2d", fallback);
  if (!v.ok() || v->size() != 2) return false;
  *out = *v;
  return true;
}

}  // namespace

ExternComputeFn Conv2dExternCompute() {
  return [](const ir::Target& target, const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Made {
    const ir::Type t = outs[0].type;
    int64_t dtype = t == ir::Float(32) ? 0 : t == ir::Float16() ? 1 : t == ir::BFloat16() ? 2 : -1;
    bool alike = true;
    for (const Tensor& x : in) alike &= x->dtype == t;
    if (dtype < 0 || !alike) {
      return Declined("the library call takes float32, float16 and bfloat16 operands alike");
    }
    std::vector<int64_t> strides, dilations, pads;
    auto p = GetInts(attrs, "paddings", "conv2d", std::vector<int64_t>{0, 0});
    auto groups = GetInt(attrs, "groups", "conv2d", 1);
    bool ok = p.ok() && groups.ok() && ReadPair(attrs, "strides", {1, 1}, &strides) &&
              ReadPair(attrs, "dilations", {1, 1}, &dilations);
    if (ok && p->size() == 2) pads = *p;
    if (ok && p->size() == 4 && (*p)[0] == (*p)[1] && (*p)[2] == (*p)[3]) {
      pads = {(*p)[0], (*p)[2]};
    }
    if (!ok || pads.size() != 2) return Declined("the paddings are not symmetric");
    auto format = GetString(attrs, "data_format", "conv2d", "NCHW");
    if (!format.ok()) return format.status();
    const bool last = *format == "NHWC";
    // Where C, H and W are in x, KH and KW in the weight, OH and OW in y.
    const int c = last ? 3 : 1, h = last ? 1 : 2, w_ = last ? 2 : 3;
    const int kh = last ? 1 : 2, kw = last ? 2 : 3;
    const Tensor &x = in[0], &w = in[1];
    const auto& y = outs[0].shape;
    bool bias = in.size() == 3;
    ir::Conv2dArgs<Expr> a;
    a.has_bias = Expr(int64_t{bias}), a.dtype = Expr(dtype);
    a.n = AsInt64(x->shape[0]), a.c = AsInt64(x->shape[c]);
    a.h = AsInt64(x->shape[h]), a.w = AsInt64(x->shape[w_]);
    a.k = AsInt64(w->shape[0]), a.r = AsInt64(w->shape[kh]), a.s = AsInt64(w->shape[kw]);
    a.out_h = AsInt64(y[h]), a.out_w = AsInt64(y[w_]);
    a.pad_h = Expr(pads[0]), a.pad_w = Expr(pads[1]);
    a.stride_h = Expr(strides[0]), a.stride_w = Expr(strides[1]);
    a.dilation_h = Expr(dilations[0]), a.dilation_w = Expr(dilations[1]);
    a.groups = Expr(*groups);
    // An activation after the bias (FoldConvEpilogue): the call with an epilogue, NCHW only.
    auto epilogue = GetMatmulEpilogue(in.size(), attrs, "conv2d");
    if (!epilogue.ok()) return epilogue.status();
    ir::LibraryCall call = last ? ir::LibraryCall::kConv2dChannelsLast : ir::LibraryCall::kConv2d;
    if (epilogue->activation != 0) {
      if (last) return Declined("no library call applies an activation to an NHWC convolution");
      call = ir::LibraryCall::kConv2dEpilogue;
      a.activation = Expr(epilogue->activation);
    }
    const std::vector<Expr> ints = ir::ArgList(a, epilogue->activation != 0);
    auto f = FindLibrary(target, call, ints);
    if (!f.ok()) return Declined(std::string(f.status().message()));
    const std::string function = f->function;
    return MadeBy(
        *f, {ir::ExternTensor(name, t, y, in,
                              [=](const std::vector<ir::Buffer>& b, const ir::Buffer& out) {
                                std::vector<Expr> args{b[0]->data, b[1]->data,
                                                       bias ? b[2]->data : out->data, out->data};
                                args.insert(args.end(), ints.begin(), ints.end());
                                return ir::ExternCall(function, args);
                              })});
  };
}

ExternComputeFn ConvBackwardExternCompute(bool filter) {
  return [filter](const ir::Target& target, const std::vector<Tensor>& in,
                  const AttributeMap& attrs, const std::vector<ComputeOutput>& outs,
                  const std::string& name) -> Made {
    const char* op = filter ? "conv2d_backward_filter" : "conv2d_backward_data";
    const ir::Type t = outs[0].type;
    int64_t dtype = t == ir::Float(32) ? 0 : t == ir::Float16() ? 1 : t == ir::BFloat16() ? 2 : -1;
    if (dtype < 0) return Declined("the library call takes float32, float16 and bfloat16");
    std::vector<int64_t> strides, dilations, pads;
    auto groups = GetInt(attrs, "groups", op, 1);
    if (!groups.ok() || !ReadPair(attrs, "strides", {1, 1}, &strides) ||
        !ReadPair(attrs, "dilations", {1, 1}, &dilations) ||
        !ReadPair(attrs, "paddings", {0, 0}, &pads)) {
      return Declined("malformed attributes");
    }
    // The forward's x [n, c, h, w], w [k, c / groups, r, s] and y [n, k, out_h, out_w]: x is
    // the data gradient's result (dy and w its operands), w the filter gradient's (x and dy).
    const auto& x = filter ? in[0]->shape : outs[0].shape;
    const auto& w = filter ? outs[0].shape : in[1]->shape;
    const auto& y = filter ? in[1]->shape : in[0]->shape;
    ir::Conv2dGradArgs<Expr> a;
    a.dtype = Expr(dtype);
    a.n = AsInt64(x[0]), a.c = AsInt64(x[1]), a.h = AsInt64(x[2]), a.w = AsInt64(x[3]);
    a.k = AsInt64(w[0]), a.r = AsInt64(w[2]), a.s = AsInt64(w[3]);
    a.out_h = AsInt64(y[2]), a.out_w = AsInt64(y[3]);
    a.pad_h = Expr(pads[0]), a.pad_w = Expr(pads[1]);
    a.stride_h = Expr(strides[0]), a.stride_w = Expr(strides[1]);
    a.dilation_h = Expr(dilations[0]), a.dilation_w = Expr(dilations[1]);
    a.groups = Expr(*groups);
    const std::vector<Expr> ints = ir::ArgList(a);
    const ir::LibraryCall call =
        filter ? ir::LibraryCall::kConv2dBackwardFilter : ir::LibraryCall::kConv2dBackwardData;
    auto f = FindLibrary(target, call, ints);
    if (!f.ok()) return Declined(std::string(f.status().message()));
    const std::string function = f->function;
    return MadeBy(*f,
                  {ir::ExternTensor(name, t, outs[0].shape, in,
                                    [=](const std::vector<ir::Buffer>& b, const ir::Buffer& out) {
                                      std::vector<Expr> args{b[0]->data, b[1]->data, out->data};
                                      args.insert(args.end(), ints.begin(), ints.end());
                                      return ir::ExternCall(function, args);
                                    })});
  };
}

}  // namespace cinn_like::hlir::ops
