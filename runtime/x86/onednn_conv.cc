/// \file The conv2d extern on oneDNN: one forward-inference convolution primitive per
/// configuration of plain NCHW tensors (grouped weights as [groups, k / groups, c / groups, r,
/// s]), the bias through its bias input; the primitive runs on those layouts, or on layouts of
/// oneDNN's choosing with reorders around it (MakeConv2d says when).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/status_return.h"
#include "runtime/x86/onednn.h"
#include "runtime/x86/onednn_library.h"

namespace cinn_like::runtime::x86 {
namespace {

// The configuration as the cache's key.
// clang-format off
enum : size_t {
  kDType, kN, kC, kH, kW, kK, kR, kS, kOutH, kOutW,
  kPadH, kPadW, kStrideH, kStrideW, kDilationH, kDilationW, kGroups, kBias, kActivation
};
// clang-format on

std::vector<int64_t> Key(const DnnlConv2dArgs& a) {
  return {a.dtype,     a.n,        a.c,          a.h,          a.w_dim,  a.k,
          a.r,         a.s,        a.out_h,      a.out_w,      a.pad_h,  a.pad_w,
          a.stride_h,  a.stride_w, a.dilation_h, a.dilation_w, a.groups, a.bias != nullptr,
          a.activation};
}

std::string Describe(const DnnlConv2dArgs& a) {
  return absl::StrCat("oneDNN conv2d (x [", a.n, ", ", a.c, ", ", a.h, ", ", a.w_dim, "], w [", a.k,
                      ", ", a.groups > 0 ? a.c / a.groups : a.c, ", ", a.r, ", ", a.s, "], y [",
                      a.n, ", ", a.k, ", ", a.out_h, ", ", a.out_w, "], pad ", a.pad_h, "x",
                      a.pad_w, ", stride ", a.stride_h, "x", a.stride_w, ", dilation ",
                      a.dilation_h, "x", a.dilation_w, ", groups ", a.groups, ", dtype code ",
                      a.dtype, a.bias ? ", bias" : "", DnnlActivationText(a.activation), ")");
}

/// The convolution of `key` on plain NCHW/OIHW tensors, or with `own_layouts` on layouts oneDNN
/// chooses for its source, weights and destination (reordered from and to the plain ones).
absl::StatusOr<DnnlPrimitive> MakeConv2dIn(const Dnnl& d, const std::vector<int64_t>& key,
                                           bool own_layouts) {
  const dnnl_data_type_t type = DnnlDataType(key[kDType]);
  const int64_t g = key[kGroups];
  dnnl_memory_desc_t x, w, bias, y;
  dnnl_dims_t x_dims{key[kN], key[kC], key[kH], key[kW]};
  dnnl_dims_t y_dims{key[kN], key[kK], key[kOutH], key[kOutW]};
  dnnl_dims_t w_dims{key[kK], key[kC], key[kR], key[kS]};
  dnnl_dims_t g_dims{g, key[kK] / g, key[kC] / g, key[kR], key[kS]};
  dnnl_dims_t b_dims{key[kK]};
  auto init = [&](dnnl_memory_desc_t* md, int rank, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
    return CheckDnnl(d, d.dnnl_memory_desc_init_by_tag(md, rank, dims, type, tag),
                     "dnnl_memory_desc_init_by_tag");
  };
  absl::Status st = init(&x, 4, x_dims, dnnl_nchw);
  if (st.ok()) st = init(&y, 4, y_dims, dnnl_nchw);
  if (st.ok()) st = g == 1 ? init(&w, 4, w_dims, dnnl_oihw) : init(&w, 5, g_dims, dnnl_goihw);
  if (st.ok()) st = init(&bias, 1, b_dims, dnnl_a);
  std::map<int, dnnl_memory_desc_t> plain{
      {DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}};
  if (st.ok() && own_layouts) {
    st = init(&x, 4, x_dims, dnnl_format_tag_any);
    if (st.ok()) st = init(&y, 4, y_dims, dnnl_format_tag_any);
    if (st.ok()) st = init(&w, g == 1 ? 4 : 5, g == 1 ? w_dims : g_dims, dnnl_format_tag_any);
  }
  if (!st.ok()) return st;
  // oneDNN counts dilation from 0 (no gap), PyTorch and cuDNN from 1.
  dnnl_dims_t strides{key[kStrideH], key[kStrideW]};
  dnnl_dims_t dilates{key[kDilationH] - 1, key[kDilationW] - 1};
  dnnl_dims_t pads{key[kPadH], key[kPadW]};
  dnnl_convolution_desc_t desc;
  st = CheckDnnl(d,
                 d.dnnl_dilated_convolution_forward_desc_init(
                     &desc, dnnl_forward_inference, dnnl_convolution_direct, &x, &w,
                     key[kBias] ? &bias : nullptr, &y, strides, dilates, pads, pads),
                 "dnnl_dilated_convolution_forward_desc_init");
  if (!st.ok()) return st;
  std::vector<std::pair<int, dnnl_memory_desc_t>> args{{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}};
  if (key[kBias]) args.push_back({DNNL_ARG_BIAS, bias});
  args.push_back({DNNL_ARG_DST, y});
  return CreatePrimitive(d, &desc, std::move(args), plain, DnnlActivationAlg(key[kActivation]));
}

/// Whether `impl` is oneDNN's convolution through an im2col GEMM ("x64:gemm:jit") or its
/// reference loops ("ref:any"): what it runs on plain NCHW float32 tensors, several times
/// slower than its direct kernels on blocked layouts.
bool IsGemmOrReference(const std::string& impl) {
  return impl.find("gemm") != std::string::npos || impl.rfind("ref", 0) == 0;
}

/// The convolution on the plain NCHW layouts, unless oneDNN runs those through a GEMM and has a
/// direct kernel for layouts of its own, and its weights are no larger than its source and
/// destination together: then that one, with the source and weights reordered into its layouts
/// and the destination out of them at each call (a pass over each, cheaper than the GEMM's
/// im2col; weights larger than the activations, ResNet's last layers at batch 1, cost more to
/// reorder at each call than the GEMM loses: 0.94 against 0.66 ms for 512 -> 512 channels on a
/// 7x7 image).
absl::StatusOr<DnnlPrimitive> MakeConv2d(const Dnnl& d, const std::vector<int64_t>& key) {
  auto plain = MakeConv2dIn(d, key, /*own_layouts=*/false);
  if (!plain.ok() || !IsGemmOrReference(plain->impl)) return plain;
  const int64_t weights = key[kK] * (key[kC] / key[kGroups]) * key[kR] * key[kS];
  const int64_t activations =
      key[kN] * (key[kC] * key[kH] * key[kW] + key[kK] * key[kOutH] * key[kOutW]);
  if (weights > activations) return plain;
  auto own = MakeConv2dIn(d, key, /*own_layouts=*/true);
  if (!own.ok()) return plain;
  if (IsGemmOrReference(own->impl)) {
    DestroyPrimitive(d, *own);
    return plain;
  }
  DestroyPrimitive(d, *plain);
  own->impl += " (blocked layouts, reordered at each call)";
  return own;
}

PrimitiveCache& Cache() {
  static PrimitiveCache* cache = new PrimitiveCache;
  return *cache;
}

/// Checks the arguments and loads oneDNN; errors start with Describe(a).
absl::StatusOr<const Dnnl*> Check(const DnnlConv2dArgs& a) {
  std::string what = Describe(a);
  if (DnnlDataType(a.dtype) == dnnl_data_type_undef) {
    return absl::InvalidArgumentError(what + ": unsupported dtype");
  }
  if (a.groups <= 0 || a.c % a.groups || a.k % a.groups) {
    return absl::InvalidArgumentError(what + ": groups must divide the channels");
  }
  if (a.stride_h < 1 || a.stride_w < 1 || a.dilation_h < 1 || a.dilation_w < 1 || a.pad_h < 0 ||
      a.pad_w < 0) {
    return absl::InvalidArgumentError(what + ": strides and dilations must be >= 1, pads >= 0");
  }
  if (a.activation < kDnnlActivationNone || a.activation > kDnnlActivationGeluTanh) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": unknown activation code ", a.activation));
  }
  auto d = GetDnnl();
  if (!d.ok()) {
    return absl::Status(d.status().code(), what + ": " + std::string(d.status().message()));
  }
  return d;
}

bool Empty(const DnnlConv2dArgs& a) { return a.n == 0 || a.k == 0 || a.out_h == 0 || a.out_w == 0; }

absl::StatusOr<const DnnlPrimitive*> Prepare(const Dnnl& d, const DnnlConv2dArgs& a) {
  auto p = Cache().Get(d, Key(a), MakeConv2d);
  if (!p.ok()) {
    return absl::Status(p.status().code(),
                        absl::StrCat(Describe(a), " with ", d.version, ": ", p.status().message()));
  }
  return p;
}

}  // namespace

absl::StatusOr<std::string> DnnlPrepareConv2d(const DnnlConv2dArgs& a) {
  auto d = Check(a);
  if (!d.ok()) return d.status();
  if (Empty(a)) return (*d)->version + " (no output)";
  auto p = Prepare(**d, a);
  if (!p.ok()) return p.status();
  auto impl = FastImplementation(**d, **p);
  if (!impl.ok()) {
    return absl::UnimplementedError(Describe(a) + ": " + std::string(impl.status().message()));
  }
  return impl;
}

absl::Status DnnlConv2d(const DnnlConv2dArgs& a) {
  auto d = Check(a);
  if (!d.ok()) return d.status();
  if (Empty(a)) return absl::OkStatus();
  auto p = Prepare(**d, a);
  if (!p.ok()) return p.status();
  return ExecuteForward(**d, **p, a.x, a.w, a.bias, a.y, Describe(a));
}

}  // namespace cinn_like::runtime::x86

extern "C" int cinn_like_dnnl_conv2d_epilogue(const void* x, const void* w, const void* bias,
                                              void* y,
                                              CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM)
                                                  int64_t activation,
                                              void* /*stream*/) {
  namespace x86 = cinn_like::runtime::x86;
  const cinn_like::runtime::Conv2dArgList<int64_t> list{CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_VALUE)
                                                            activation};
  x86::DnnlConv2dArgs args{};
  args.x = x;
  args.w = w;
  args.bias = list.has_bias ? bias : nullptr;
  args.y = y;
  cinn_like::runtime::SetConv2dSizes(list, args);
  args.activation = list.activation;
  return cinn_like::runtime::ReturnStatus(x86::DnnlConv2d(args));
}

extern "C" int cinn_like_dnnl_conv2d(const void* x, const void* w, const void* bias, void* y,
                                     CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM) void* stream) {
  return cinn_like_dnnl_conv2d_epilogue(x, w, bias, y,
                                        CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_VALUE)
                                            cinn_like::runtime::x86::kDnnlActivationNone,
                                        stream);
}
