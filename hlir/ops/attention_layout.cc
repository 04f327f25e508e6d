/// \file Where attention's operands lie (hlir/ops/attention.h, AttentionLayout): the layout read
/// and checked, the operands' [B, H, L, D] shapes and element strides, the float64 reference's
/// operands, and the decomposed compute wrapped to read and write operands where they lie.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlir/ops/attention.h"
#include "hlir/ops/compute_util.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Perm = AttentionLayout::Perm;

constexpr Perm kIdentity = AttentionLayout::kIdentity;

absl::Status BadAttr(const std::string& op, const char* name, const std::vector<int64_t>& got,
                     const char* must) {
  return absl::InvalidArgumentError(absl::StrCat("op ", op, ": attribute '", name, "' is [",
                                                 absl::StrJoin(got, ", "), "]; it must be ", must));
}

}  // namespace

bool AttentionLayout::identity() const {
  for (const Perm& p : perms) {
    if (p != kIdentity) return false;
  }
  for (const auto& h : heads) {
    if (h[1] >= 0) return false;
  }
  return true;
}

absl::StatusOr<AttentionLayout> ReadAttentionLayout(const AttributeMap& attrs,
                                                    const std::string& op) {
  AttentionLayout read;
  for (int o = 0; o < 4; ++o) {
    if (!attrs.count(kAttentionPermAttrs[o])) continue;
    auto perm = GetInts(attrs, kAttentionPermAttrs[o], op);
    if (!perm.ok()) return perm.status();
    bool ok = perm->size() == 4 && (*perm)[3] == 3;
    Perm p{};
    std::array<bool, 4> seen{};
    for (size_t d = 0; ok && d < 4; ++d) {
      const int64_t x = (*perm)[d];
      ok = x >= 0 && x < 4 && !seen[x];
      if (ok) seen[x] = true, p[d] = static_cast<int>(x);
    }
    if (!ok) {
      return BadAttr(op, kAttentionPermAttrs[o], *perm,
                     "a permutation of [0, 1, 2, 3] that keeps the head dim last (3 last)");
    }
    read.perms[o] = p;
  }
  for (int o = 0; o < 3; ++o) {
    if (!attrs.count(kAttentionHeadsAttrs[o])) continue;
    auto heads = GetInts(attrs, kAttentionHeadsAttrs[o], op);
    if (!heads.ok()) return heads.status();
    if (heads->size() != 2 || (*heads)[0] < 0 || (*heads)[1] < 1) {
      return BadAttr(op, kAttentionHeadsAttrs[o], *heads,
                     "[first, count], first >= 0 and count >= 1");
    }
    read.heads[o] = {(*heads)[0], (*heads)[1]};
  }
  return read;
}

Shape AttentionOperandShape(const Shape& stored, const AttentionLayout& l, int o) {
  Shape logical = AttentionLogicalShape(stored, l.perms[o]);
  if (l.heads[o][1] >= 0) logical[1] = Dim::Known(l.heads[o][1]);
  return logical;
}

std::vector<Expr> AttentionOperandShape(const std::vector<Expr>& stored, const AttentionLayout& l,
                                        int o) {
  std::vector<Expr> logical = AttentionLogicalShape(stored, l.perms[o]);
  if (l.heads[o][1] >= 0) logical[1] = ir::IndexConst(l.heads[o][1]);
  return logical;
}

Perm InversePerm(const Perm& p) {
  Perm inv{};
  for (int d = 0; d < 4; ++d) inv[p[d]] = d;
  return inv;
}

std::vector<Expr> AttentionOperandStrides(const std::vector<Expr>& stored, const AttentionLayout& l,
                                          int o) {
  const std::vector<Expr> st = RowMajorStrideExprs(stored);
  const Perm& p = l.perms[o];
  std::vector<Expr> strides(4);
  for (int d = 0; d < 3; ++d) {
    // An input: its dim d is stored dim p[d]. The output is transpose(out, p): its dim e is
    // out's dim p[e], so out's dim d is the stored dim e with p[e] == d.
    int at = p[d];
    if (o == 3) at = InversePerm(p)[d];
    strides[d] = st[at];
  }
  strides[3] = o < 3 && l.heads[o][1] >= 0 ? strides[1] * Expr(l.heads[o][0]) : Expr(int64_t{0});
  return strides;
}

namespace {

/// transpose(t, p) of a rank-4 host tensor, with heads [first, first + count) of its axis 1
/// (count -1: all).
HostTensor TransposeHost(const HostTensor& t, const Perm& p, int64_t first, int64_t count) {
  std::vector<int64_t> shape(4);
  for (int d = 0; d < 4; ++d) shape[d] = t.shape[p[d]];
  if (count >= 0) shape[1] = count;
  HostTensor r(t.dtype, shape);
  const std::vector<int64_t> strides = RowMajorStrides(t.shape);
  int64_t flat = 0;
  ForEachIndex(shape, [&](const std::vector<int64_t>& idx) {
    int64_t src = first * strides[p[1]];
    for (int d = 0; d < 4; ++d) src += idx[d] * strides[p[d]];
    r.data[flat++] = t.data[src];
  });
  return r;
}

}  // namespace

HostTensor AttentionOperandHost(const HostTensor& stored, const AttentionLayout& l, int o) {
  return TransposeHost(stored, l.perms[o], l.heads[o][0], l.heads[o][1]);
}

HostTensor AttentionOutputHost(const HostTensor& out, const AttentionLayout& l) {
  return TransposeHost(out, l.perms[3], 0, -1);
}

ComputeFn WithAttentionLayout(ComputeFn compute) {
  return [compute](const std::vector<Tensor>& in, const AttributeMap& attrs,
                   const std::vector<ComputeOutput>& outs,
                   const std::string& name) -> absl::StatusOr<std::vector<Tensor>> {
    auto layout = ReadAttentionLayout(attrs, "attention");
    if (!layout.ok()) return layout.status();
    if (layout->identity()) return compute(in, attrs, outs, name);
    // Each operand as [B, H, S, D] (an element read where it is stored), out computed so and
    // stored transposed by out_perm.
    std::vector<Tensor> logical = in;
    for (int o = 0; o < 3; ++o) {
      const Perm p = layout->perms[o];
      const int64_t first = layout->heads[o][1] >= 0 ? layout->heads[o][0] : 0;
      if (p == kIdentity && layout->heads[o][1] < 0) continue;
      const Tensor x = in[o];
      logical[o] = ir::Compute(
          AttentionOperandShape(x->shape, *layout, o),
          [&](const Indices& i) {
            Indices at(4);
            for (int d = 0; d < 4; ++d) at[p[d]] = i[d];
            if (first) at[p[1]] = at[p[1]] + ir::IndexConst(first);
            return x(at);
          },
          absl::StrCat(name, "_", kAttentionPermAttrs[o]));
    }
    const Perm out_perm = layout->perms[3];
    std::vector<ComputeOutput> logical_outs = outs;
    logical_outs[0].shape = AttentionLogicalShape(outs[0].shape, InversePerm(out_perm));
    auto made =
        compute(logical, attrs, logical_outs, out_perm == kIdentity ? name : name + "_bhsd");
    if (!made.ok() || out_perm == kIdentity) return made;
    const Tensor out = (*made)[0];
    (*made)[0] = ir::Compute(
        outs[0].shape,
        [&](const Indices& i) {
          Indices at(4);
          for (int e = 0; e < 4; ++e) at[out_perm[e]] = i[e];
          return out(at);
        },
        name);
    return made;
  };
}

}  // namespace cinn_like::hlir::ops
