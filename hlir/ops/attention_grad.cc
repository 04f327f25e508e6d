/// \file attention_grad (attention's backward, hlir/ops/attention.h says what it computes):
/// shape and dtype inference, the float64 reference and the registration. Opaque, as attention
/// is: its GPU form is one hand-written kernel.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "hlir/ops/attention.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir::ops {
namespace {

constexpr const char* kOp = "attention_grad";
constexpr int kForwardOnly = 3;  // out, grad_out and logsumexp: inputs 3, 4 and 5

/// q, k, v and the inputs after the logsumexp (mask, seed, stream): attention's inputs.
template <typename T>
std::vector<T> ForwardInputs(const std::vector<T>& in) {
  std::vector<T> fwd(in.begin(), in.begin() + 3);
  fwd.insert(fwd.end(), in.begin() + 3 + kForwardOnly, in.end());
  return fwd;
}

absl::StatusOr<std::vector<TensorDesc>> InferAttentionGrad(const std::vector<TensorDesc>& in,
                                                           const AttributeMap& attrs) {
  auto perms = ReadAttentionLayout(attrs, kOp);
  if (!perms.ok()) return perms.status();
  if (!perms->identity()) {
    return absl::InvalidArgumentError(
        "op attention_grad: its operands are [B, H, L, D] tensors; it takes no q_perm, k_perm, "
        "v_perm, out_perm, q_heads, k_heads or v_heads (attention does)");
  }
  auto fwd = InferAttention(ForwardInputs(in), attrs);
  if (!fwd.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op attention_grad (q, k, v and the inputs after logsumexp checked as attention's): ",
        fwd.status().message()));
  }
  const char* names[] = {"out", "grad_out", "logsumexp"};
  const TensorDesc* want[] = {&(*fwd)[0], &(*fwd)[0], &(*fwd)[1]};
  for (int i = 0; i < kForwardOnly; ++i) {
    const TensorDesc& got = in[3 + i];
    if (got.dtype != want[i]->dtype || got.shape != want[i]->shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("op attention_grad: ", names[i], " (input ", 3 + i, ") is ", got.ToString(),
                       "; for q ", in[0].ToString(), ", k ", in[1].ToString(), " and v ",
                       in[2].ToString(), " it must be ", want[i]->ToString()));
    }
  }
  const Shape& q = in[0].shape;
  return std::vector<TensorDesc>{in[1], in[2],
                                 TensorDesc{in[0].dtype, {q[0], q[1], q[2], in[1].shape[2]}}};
}

/// Plain loops in double over every (batch, head, query row), accumulating dk and dv.
absl::Status ReferenceAttentionGrad(const std::vector<const HostTensor*>& in,
                                    const AttributeMap& attrs, std::vector<HostTensor>& outs) {
  const HostTensor &q = *in[0], &k = *in[1], &v = *in[2], &o = *in[3], &go = *in[4];
  const HostTensor& lse = *in[5];
  const int64_t batch = q.shape[0], heads = q.shape[1], lq = q.shape[2], d = q.shape[3];
  const int64_t kv_heads = k.shape[1], lk = k.shape[2], dv = v.shape[3];
  auto a = ReadAttentionAttrs(attrs, d, in.size() - kForwardOnly);
  if (!a.ok()) return a.status();
  const ReferenceMasking masking(*a, ForwardInputs(in));
  for (HostTensor& t : outs) std::fill(t.data.begin(), t.data.end(), 0.0);
  HostTensor &dk = outs[0], &dvt = outs[1], &dqk = outs[2];
  const int64_t group = kv_heads ? heads / kv_heads : 1;
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t kv = b * kv_heads + h / group;
      for (int64_t i = 0; i < lq; ++i) {
        const int64_t row = (b * heads + h) * lq + i;
        const double* qp = q.data.data() + row * d;
        const double* op = o.data.data() + row * dv;
        const double* gp = go.data.data() + row * dv;
        double di = 0;
        for (int64_t e = 0; e < dv; ++e) di += gp[e] * op[e];
        for (int64_t j = 0; j < lk; ++j) {
          const double* kp = k.data.data() + (kv * lk + j) * d;
          const double* vp = v.data.data() + (kv * lk + j) * dv;
          double dot = 0, dp = 0;
          for (int64_t e = 0; e < d; ++e) dot += qp[e] * kp[e];
          for (int64_t e = 0; e < dv; ++e) dp += gp[e] * vp[e];
          const double s = masking.Score(dot, b, h, i, j);
          const double p = s != -inf ? std::exp(s - lse.data[row]) : 0;
          const double w = masking.Weight(row * lk + j);
          const double ds = p * (dp * w - di);
          dqk.data[row * lk + j] = a->scale * ds;
          for (int64_t e = 0; e < d; ++e) dk.data[(kv * lk + j) * d + e] += a->scale * ds * qp[e];
          for (int64_t e = 0; e < dv; ++e) dvt.data[(kv * lk + j) * dv + e] += p * w * gp[e];
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterAttentionGrad(OpRegistry& r) {
  OpDef grad{kOp, OpPattern::kOpaque, 6, 9, 3, InferAttentionGrad, ReferenceAttentionGrad};
  grad.compute = AttentionGradCompute();
  grad.extern_compute = AttentionGradKernelCompute();
  r.Register(std::move(grad));
}

}  // namespace cinn_like::hlir::ops
