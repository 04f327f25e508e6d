/// \file attention (scaled dot-product attention, hlir/ops/attention.h says what it computes):
/// shape and dtype inference with the checks that name each tensor, the float64 reference and
/// the registration. Opaque: it fuses with nothing (its GPU form is one hand-written kernel).
#include "hlir/ops/attention.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"
#include "ir/philox.h"

namespace cinn_like::hlir {
namespace {

using ops::AttentionAttrs;

constexpr const char* kOp = "attention";
/// "q (input 0, float32[2, 4, 8, 16])"; the inputs after v are the mask, seed and stream, or
/// (no mask) seed and stream.
constexpr const char* kNames[] = {"q", "k", "v", "mask", "seed", "stream"};
std::string Describe(const std::vector<TensorDesc>& in, int i) {
  const bool dropout_without_mask = in.size() == 5;
  const char* name = kNames[dropout_without_mask && i >= 3 ? i + 1 : i];
  return absl::StrCat(name, " (input ", i, ", ", in[i].ToString(), ")");
}

absl::Status ShapeError(const std::vector<TensorDesc>& in, const std::string& what) {
  std::string all;
  for (size_t i = 0; i < in.size(); ++i) absl::StrAppend(&all, i ? ", " : "", Describe(in, i));
  return absl::InvalidArgumentError(absl::StrCat("op attention: ", what, "; got ", all));
}

/// H a multiple of Hkv: known sizes, or the same symbol.
bool HeadsGroup(const Dim& h, const Dim& hkv) {
  if (h == hkv) return true;
  if (h.is_symbolic() || hkv.is_symbolic()) return false;
  return hkv.value > 0 && h.value % hkv.value == 0;
}

}  // namespace

namespace ops {

absl::StatusOr<std::vector<TensorDesc>> InferAttention(const std::vector<TensorDesc>& in,
                                                       const AttributeMap& attrs) {
  for (int i = 0; i < 3; ++i) {
    absl::Status s = ops::CheckDType(kOp, i, in[i], ops::DTypeClass::kFloat);
    if (!s.ok()) return s;
    if (in[i].shape.size() != 4) {
      return ShapeError(
          in, absl::StrCat(kNames[i], " must have rank 4 ([batch, heads, length, ", "head dim])"));
    }
  }
  absl::Status same = ops::CheckSameDType(kOp, {in[0], in[1], in[2]});
  if (!same.ok()) return same;
  auto layout = ops::ReadAttentionLayout(attrs, kOp);
  if (!layout.ok()) return layout.status();
  // The [B, H, L, D] operands (the checks below name the inputs as they are stored).
  std::array<Shape, 3> logical;
  for (int i = 0; i < 3; ++i) {
    const Dim all = ops::AttentionLogicalShape(in[i].shape, layout->perms[i])[1];
    const auto& [first, count] = layout->heads[i];
    if (count >= 0 && (all.is_symbolic() || first + count > all.value)) {
      return ShapeError(in, absl::StrCat(kNames[i], "'s heads [", first, ", ", first + count,
                                         ") are not within its ", all.ToString(), " heads"));
    }
    logical[i] = ops::AttentionOperandShape(in[i].shape, *layout, i);
  }
  const Shape& q = logical[0];
  auto a = ops::ReadAttentionAttrs(attrs, q[3].is_symbolic() ? -1 : q[3].value, in.size());
  if (!a.ok()) return a.status();
  for (size_t i = in.size() - (a->dropout > 0 ? 2 : 0); i < in.size(); ++i) {
    const TensorDesc& t = in[i];
    if (t.dtype != DType::kInt64 || t.shape.size() != 1 || !t.shape[0].is_one()) {
      return ShapeError(in, absl::StrCat(Describe(in, static_cast<int>(i)),
                                         " must be one int64 element, shape [1]"));
    }
  }
  const Shape &k = logical[1], &v = logical[2];
  if (q[0] != k[0] || k[0] != v[0]) return ShapeError(in, "q, k and v differ in batch size");
  if (k[1] != v[1] || k[2] != v[2]) {
    return ShapeError(in, "k and v must have the same heads and length");
  }
  if (q[3] != k[3]) return ShapeError(in, "q and k differ in head dim");
  if (!HeadsGroup(q[1], k[1])) {
    return ShapeError(in, absl::StrCat("q's heads (", q[1].ToString(),
                                       ") must be a multiple of k's and v's heads (",
                                       k[1].ToString(), ") (grouped-query attention)"));
  }
  if (a->has_mask) {
    const TensorDesc& m = in[3];
    if (m.dtype != DType::kBool && !IsFloat(m.dtype)) {
      return ShapeError(in, absl::StrCat("mask has dtype ", DTypeName(m.dtype),
                                         "; it must be bool (true keeps a key) or a float "
                                         "(added to the scores)"));
    }
    Shape scores{q[0], q[1], q[2], k[2]};
    auto b = m.shape.size() <= 4 ? BroadcastShapes(m.shape, scores)
                                 : absl::InvalidArgumentError("rank above 4");
    if (!b.ok() || *b != scores) {
      return ShapeError(in, absl::StrCat("mask must broadcast to the scores ",
                                         ShapeToString(scores), " [batch, heads, Lq, Lk]"));
    }
  }
  const Shape out{q[0], q[1], q[2], v[3]};
  return std::vector<TensorDesc>{
      TensorDesc{in[0].dtype, ops::AttentionLogicalShape(out, layout->perms[3])},
      TensorDesc{DType::kFloat32, {q[0], q[1], q[2]}}};
}

}  // namespace ops

namespace {

/// Plain loops in double over every (batch, head, query row).
absl::Status ReferenceAttention(const std::vector<const HostTensor*>& stored,
                                const AttributeMap& attrs, std::vector<HostTensor>& outs) {
  auto layout = ops::ReadAttentionLayout(attrs, kOp);
  if (!layout.ok()) return layout.status();
  if (!layout->identity()) {  // on [B, H, L, D] operands, out stored transposed
    std::array<HostTensor, 3> logical;
    std::vector<const HostTensor*> in = stored;
    for (int i = 0; i < 3; ++i) {
      logical[i] = ops::AttentionOperandHost(*stored[i], *layout, i);
      in[i] = &logical[i];
    }
    AttributeMap plain = attrs;
    for (const char* name : ops::kAttentionPermAttrs) plain.erase(name);
    for (const char* name : ops::kAttentionHeadsAttrs) plain.erase(name);
    std::vector<HostTensor> made = outs;
    made[0] = HostTensor(outs[0].dtype, ops::AttentionLogicalShape(
                                            outs[0].shape, ops::InversePerm(layout->perms[3])));
    absl::Status s = ReferenceAttention(in, plain, made);
    if (!s.ok()) return s;
    outs[0] = ops::AttentionOutputHost(made[0], *layout);
    outs[1] = std::move(made[1]);
    return absl::OkStatus();
  }
  const std::vector<const HostTensor*>& in = stored;
  const HostTensor &q = *in[0], &k = *in[1], &v = *in[2];
  const int64_t batch = q.shape[0], heads = q.shape[1], lq = q.shape[2], d = q.shape[3];
  const int64_t kv_heads = k.shape[1], lk = k.shape[2], dv = v.shape[3];
  auto a = ops::ReadAttentionAttrs(attrs, d, in.size());
  if (!a.ok()) return a.status();
  const ops::ReferenceMasking masking(*a, in);
  const int64_t group = kv_heads ? heads / kv_heads : 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> s(lk), w(lk);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const double* kp = k.data.data() + (b * kv_heads + h / group) * lk * d;
      const double* vp = v.data.data() + (b * kv_heads + h / group) * lk * dv;
      for (int64_t i = 0; i < lq; ++i) {
        const double* qp = q.data.data() + ((b * heads + h) * lq + i) * d;
        double m = -inf;
        for (int64_t j = 0; j < lk; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e) dot += qp[e] * kp[j * d + e];
          s[j] = masking.Score(dot, b, h, i, j);
          m = std::max(m, s[j]);
        }
        double* o = outs[0].data.data() + ((b * heads + h) * lq + i) * dv;
        double sum = 0;
        for (int64_t j = 0; j < lk; ++j) sum += m == -inf ? 0 : std::exp(s[j] - m);
        // Dropout: each probability's weight in p v (1 / (1 - p) kept, 0 dropped).
        for (int64_t j = 0; j < lk; ++j) w[j] = masking.Weight(((b * heads + h) * lq + i) * lk + j);
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < lk && sum > 0; ++j) {
            acc += std::exp(s[j] - m) * w[j] * vp[j * dv + e];
          }
          o[e] = sum > 0 ? acc / sum : 0;
        }
        outs[1].data[(b * heads + h) * lq + i] = sum > 0 ? m + std::log(sum) : inf;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace ops {

ReferenceMasking::ReferenceMasking(const AttentionAttrs& a,
                                   const std::vector<const HostTensor*>& fwd)
    : a_(a), mask_(a.has_mask ? fwd[3] : nullptr) {
  if (a.dropout > 0) {  // the Philox key and stream of dropout's mask
    seed_ = static_cast<uint64_t>(static_cast<int64_t>(fwd[fwd.size() - 2]->data[0]));
    stream_ = static_cast<uint64_t>(static_cast<int64_t>(fwd[fwd.size() - 1]->data[0]));
    keep_below_ = static_cast<float>(1 - a.dropout);  // as the kernels compare
  }
}

double ReferenceMasking::Score(double dot, int64_t b, int64_t h, int64_t i, int64_t j) const {
  double s = a_.scale * dot;
  bool keep = !a_.causal || j <= i;
  if (mask_) {
    const double m = mask_->data[BroadcastIndex(mask_->shape, {b, h, i, j})];
    if (mask_->dtype == DType::kBool) {
      keep = keep && m != 0;
    } else {
      s += m;
    }
  }
  return keep ? s : -std::numeric_limits<double>::infinity();
}

double ReferenceMasking::Weight(uint64_t at) const {
  if (a_.dropout == 0) return 1;
  return ir::PhiloxUniform(seed_, stream_, at) < keep_below_ ? 1 / (1 - a_.dropout) : 0;
}

int AttentionMaskInput(const std::string& op, const AttributeMap& attrs, size_t num_inputs) {
  const int slot = op == "attention" ? 3 : op == "attention_grad" ? 6 : -1;
  auto dropout = GetFloat(attrs, "dropout", op, 0.0);
  if (slot < 0 || !dropout.ok()) return -1;
  const size_t random = *dropout > 0 ? 2 : 0;  // the seed and the stream
  return num_inputs == static_cast<size_t>(slot) + 1 + random ? slot : -1;
}

absl::StatusOr<AttentionAttrs> ReadAttentionAttrs(const AttributeMap& attrs, int64_t head_dim,
                                                  size_t num_inputs) {
  AttentionAttrs a;
  auto dropout = GetFloat(attrs, "dropout", kOp, 0.0);
  if (!dropout.ok()) return dropout.status();
  if (!(*dropout >= 0 && *dropout < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("op attention: attribute 'dropout' is ", *dropout, "; it must be in [0, 1)"));
  }
  a.dropout = *dropout;
  const size_t tensors = num_inputs - (a.dropout > 0 ? 2 : 0);  // q, k, v and the mask
  if (tensors != 3 && tensors != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("op attention: ", num_inputs, " inputs with dropout ", a.dropout,
                     "; it takes q, k, v, an optional mask, and with dropout a seed and a stream"));
  }
  a.has_mask = tensors == 4;
  auto causal = GetBool(attrs, "causal", kOp, false);
  if (!causal.ok()) return causal.status();
  a.causal = *causal;
  if (!attrs.count("scale") && head_dim < 0) {
    return absl::InvalidArgumentError(
        "op attention: attribute 'scale' is missing (a float); it is required when the head dim "
        "is symbolic");
  }
  auto scale = GetFloat(attrs, "scale", kOp, head_dim > 0 ? 1 / std::sqrt(double(head_dim)) : 1.0);
  if (!scale.ok()) return scale.status();
  if (!std::isfinite(*scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("op attention: attribute 'scale' is ", *scale, "; it must be finite"));
  }
  a.scale = *scale;
  return a;
}

}  // namespace ops

void RegisterAttentionOps(OpRegistry& r) {
  OpDef attention{kOp, OpPattern::kOpaque, 3, 6, 2, ops::InferAttention, ReferenceAttention};
  attention.compute = ops::WithAttentionLayout(ops::AttentionCompute());
  // The fused kernel where the target has one (NVGPU), whatever it answers; else the library
  // matmuls (x86).
  attention.extern_compute =
      [kernel = ops::AttentionKernelCompute(), matmuls = ops::AttentionMatmulCompute()](
          const ir::Target& target, const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
          const std::vector<ComputeOutput>& outs, const std::string& name) {
        const bool fused = ops::FindLibrary(target, ir::LibraryCall::kAttention, {}).ok();
        return (fused ? kernel : matmuls)(target, in, attrs, outs, name);
      };
  // The kernel's launch and the library matmuls read their operands' data pointers alone: an
  // operand that is a view ([B, S, H * D] viewed as [B, S, H, D] and read with q_perm) is read
  // in its source's buffer, not copied.
  attention.extern_reads_data_only = true;
  r.Register(std::move(attention));
  ops::RegisterAttentionGrad(r);
}

}  // namespace cinn_like::hlir
