/// \file Injective ops that select or place elements by index: gather (torch.index_select and
/// Paddle's gather: a 1-d int32/int64 index vector along one axis), split (sizes along one
/// axis; as many outputs as sizes), pad (constant padding, [before, after] per dim), one_hot
/// (an int32/int64 index tensor to a trailing axis of `depth`) and check_index (an index
/// tensor passed on once its values are in a range).
///
/// Out-of-range indices: the reference returns an error naming the index and the bound, and so
/// does compiled code on x86 (and on GPUs with FLAGS_cinn_like_check_indices): the runtime
/// checks the index tensor before the compute reads its checked copy (hlir/ops/index_check.h).
/// The computes never read outside a buffer all the same: gather clamps the index into
/// [0, size - 1] (GPUs without the flag: an out-of-range index yields some element of the
/// axis; gathering from an empty axis is refused when the axis is static and yields 0 when it
/// is symbolic), and one_hot yields a row of zeros.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlir/op.h"
#include "hlir/ops/index_check.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using ops::DTypeClass;
using Descs = absl::StatusOr<std::vector<TensorDesc>>;
using Inputs = std::vector<const HostTensor*>;
using Tensors = absl::StatusOr<std::vector<ir::Tensor>>;

absl::Status CheckIndexDType(const std::string& op, int i, const TensorDesc& d) {
  if (d.dtype == DType::kInt32 || d.dtype == DType::kInt64) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("op ", op, ": index (input ", i, ", ",
                                                 d.ToString(), ") has dtype ", DTypeName(d.dtype),
                                                 "; ", op, " needs int32 or int64 indices"));
}

/// `v` as an int32 index clamped into [0, size - 1], clamped in its own type first.
ir::Expr ClampedIndex(ir::Expr v, ir::Expr size) {
  ir::Expr hi = ir::Cast::Make(v.type(), size - 1);
  return ir::Cast::Make(ir::Int(32), ir::max(ir::min(v, hi), ir::MakeConst(v.type(), 0)));
}

// ----------------------------------------------------------------------------------------------
// gather(x, index [k], axis): out has x's shape with dim `axis` replaced by k.

Descs InferGather(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  const std::string op = "gather";
  absl::Status s = CheckIndexDType(op, 1, in[1]);
  if (!s.ok()) return s;
  if (in[1].shape.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("op gather: index (input 1, ", in[1].ToString(),
                                                   ") must be a vector (rank 1)"));
  }
  auto axis = GetInt(attrs, "axis", op, 0);
  if (!axis.ok()) return axis.status();
  auto a = NormalizeAxis(*axis, static_cast<int>(in[0].shape.size()), op);
  if (!a.ok()) return a.status();
  const Dim &extent = in[0].shape[*a], &count = in[1].shape[0];
  if (extent == Dim::Known(0) && count != Dim::Known(0)) {  // PyTorch raises: index out of range
    return absl::OutOfRangeError(absl::StrCat("op gather: axis ", *a, " of ", in[0].ToString(),
                                              " is empty: none of the ", count.ToString(),
                                              " indices (input 1) is in range"));
  }
  Shape out = in[0].shape;
  out[*a] = count;
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

absl::Status ReferenceGather(const Inputs& in, const AttributeMap& attrs,
                             std::vector<HostTensor>& outs) {
  const HostTensor &x = *in[0], &index = *in[1];
  int axis = *NormalizeAxis(*GetInt(attrs, "axis", "gather", 0), x.rank(), "gather");
  int64_t bound = x.shape[axis];
  for (int64_t k = 0; k < index.size(); ++k) {
    double v = index.data[k];
    if (v < 0 || v >= static_cast<double>(bound)) {
      return absl::OutOfRangeError(absl::StrCat("op gather: index ", static_cast<int64_t>(v),
                                                " (at position ", k, ") is out of range [0, ",
                                                bound, ") of axis ", axis, " of ", x.Describe()));
    }
  }
  std::vector<int64_t> strides = RowMajorStrides(x.shape);
  int64_t flat = 0;
  ForEachIndex(outs[0].shape, [&](const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = static_cast<int>(d) == axis ? static_cast<int64_t>(index.data[idx[d]]) : idx[d];
      src += i * strides[d];
    }
    outs[0].data[flat++] = x.data[src];
  });
  return absl::OkStatus();
}

Tensors GatherCompute(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                      const std::vector<ComputeOutput>& outs, const std::string& name,
                      const char* check) {
  const ir::Tensor& x = in[0];
  auto axis = NormalizeAxis(*GetInt(attrs, "axis", "gather", 0), static_cast<int>(x->shape.size()),
                            "gather");
  if (!axis.ok()) return axis.status();
  int a = *axis;
  const ir::Tensor index =
      check ? ops::CheckedIndices(in[1], 0, x->shape[a],
                                  ops::AxisIndexWhat("gather", name, in[1], a, x), name, check)
            : in[1];
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& i) {
        std::vector<ir::Expr> src = i;
        src[a] = ClampedIndex(index(i[a]), x->shape[a]);
        // An empty symbolic axis has no element to clamp to (a static one is refused above).
        if (ir::AsConstInt(x->shape[a])) return x(src);
        return ir::Select::Make(x->shape[a] > 0, x(src), ir::MakeConst(x->dtype, 0));
      },
      name)};
}

Tensors ComputeGather(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                      const std::vector<ComputeOutput>& outs, const std::string& name) {
  return GatherCompute(in, attrs, outs, name, ops::IndexCheckFunction(false));
}

Tensors ComputeGatherGpu(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                         const std::vector<ComputeOutput>& outs, const std::string& name) {
  return GatherCompute(in, attrs, outs, name, ops::IndexCheckFunction(true));
}

// ----------------------------------------------------------------------------------------------
// split(x, axis, sections): one output per entry of `sections` (one entry may be -1: the rest).

absl::StatusOr<std::vector<int64_t>> Sections(const TensorDesc& x, const AttributeMap& attrs,
                                              int* axis_out) {
  const std::string op = "split";
  auto axis = GetInt(attrs, "axis", op, 0);
  if (!axis.ok()) return axis.status();
  auto a = NormalizeAxis(*axis, static_cast<int>(x.shape.size()), op);
  if (!a.ok()) return a.status();
  *axis_out = *a;
  auto sections = GetInts(attrs, "sections", op);
  if (!sections.ok()) return sections.status();
  if (x.shape[*a].is_symbolic()) {
    return absl::InvalidArgumentError(
        absl::StrCat("op split: axis ", *a, " of ", x.ToString(), " must be static"));
  }
  int64_t size = x.shape[*a].value, known = 0;
  int infer_at = -1;
  std::vector<int64_t> out = *sections;
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k] == -1 && infer_at < 0) {
      infer_at = static_cast<int>(k);
    } else if (out[k] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op split: sections [", absl::StrJoin(out, ", "), "] may hold one -1 and sizes >= 0"));
    } else if (out[k] > size) {  // (and their sum cannot overflow)
      return absl::InvalidArgumentError(absl::StrCat("op split: section ", k, " is ", out[k],
                                                     " but axis ", *a, " of ", x.ToString(),
                                                     " has size ", size));
    } else {
      known += out[k];
    }
  }
  if (infer_at >= 0 && known <= size) out[infer_at] = size - known;
  int64_t total = 0;
  for (int64_t s : out) total += s;
  if (out.empty() || total != size) {
    return absl::InvalidArgumentError(
        absl::StrCat("op split: sections [", absl::StrJoin(*sections, ", "), "] sum to ", total,
                     " but axis ", *a, " of ", x.ToString(), " has size ", size));
  }
  return out;
}

Descs InferSplit(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  int axis = 0;
  auto sections = Sections(in[0], attrs, &axis);
  if (!sections.ok()) return sections.status();
  std::vector<TensorDesc> outs;
  for (int64_t s : *sections) {
    outs.push_back(in[0]);
    outs.back().shape[axis] = Dim::Known(s);
  }
  return outs;
}

absl::Status ReferenceSplit(const Inputs& in, const AttributeMap& attrs,
                            std::vector<HostTensor>& outs) {
  const HostTensor& x = *in[0];
  int axis = 0;
  auto sections = Sections(TensorDesc{x.dtype, MakeShape(x.shape)}, attrs, &axis);
  if (!sections.ok()) return sections.status();
  std::vector<int64_t> strides = RowMajorStrides(x.shape);
  int64_t offset = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    int64_t flat = 0;
    ForEachIndex(outs[k].shape, [&](const std::vector<int64_t>& idx) {
      int64_t src = offset * strides[axis];
      for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * strides[d];
      outs[k].data[flat++] = x.data[src];
    });
    offset += (*sections)[k];
  }
  return absl::OkStatus();
}

Tensors ComputeSplit(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                     const std::vector<ComputeOutput>& outs, const std::string& name) {
  const ir::Tensor& x = in[0];
  // The sizes are the output shapes along the axis.
  auto a =
      NormalizeAxis(*GetInt(attrs, "axis", "split", 0), static_cast<int>(x->shape.size()), "split");
  if (!a.ok()) return a.status();
  int axis = *a;
  std::vector<ir::Tensor> result;
  ir::Expr offset = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    result.push_back(ir::Compute(
        outs[k].shape,
        [&](const std::vector<ir::Expr>& i) {
          std::vector<ir::Expr> src = i;
          src[axis] = i[axis] + offset;
          return x(src);
        },
        absl::StrCat(name, "_", k)));
    offset = offset + outs[k].shape[axis];
  }
  return result;
}

// ----------------------------------------------------------------------------------------------
// pad(x, paddings [before_0, after_0, before_1, after_1, ...], value)

absl::StatusOr<std::vector<int64_t>> Paddings(const TensorDesc& x, const AttributeMap& attrs) {
  auto p = GetInts(attrs, "paddings", "pad");
  if (!p.ok()) return p.status();
  size_t rank = x.shape.size();
  bool ok = p->size() == 2 * rank;
  for (int64_t v : *p) ok = ok && v >= 0;
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("op pad: attribute 'paddings' is [", absl::StrJoin(*p, ", "), "], expected ",
                     2 * rank, " entries >= 0 ([before, after] per dim of ", x.ToString(), ")"));
  }
  for (size_t d = 0; d < rank; ++d) {
    if (x.shape[d].is_symbolic() && ((*p)[2 * d] || (*p)[2 * d + 1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op pad: dim ", d, " of ", x.ToString(), " is symbolic; only static dims can be padded"));
    }
  }
  return p;
}

Descs InferPad(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  absl::Status s = ops::CheckDType("pad", 0, in[0], DTypeClass::kNumeric);
  if (!s.ok()) return s;
  auto p = Paddings(in[0], attrs);
  if (!p.ok()) return p.status();
  auto value = GetFloat(attrs, "value", "pad", 0.0);
  if (!value.ok()) return value.status();
  s = CheckScalarFits("pad", "value", *value, in[0].dtype);
  if (!s.ok()) return s;
  Shape out = in[0].shape;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d].is_symbolic()) continue;
    if (__builtin_add_overflow(out[d].value, (*p)[2 * d], &out[d].value) ||
        __builtin_add_overflow(out[d].value, (*p)[2 * d + 1], &out[d].value) ||
        out[d].value > kMaxElements) {
      return absl::OutOfRangeError(
          absl::StrCat("op pad: paddings ", (*p)[2 * d], " and ", (*p)[2 * d + 1], " of dim ", d,
                       " of ", in[0].ToString(), " make it longer than ", kMaxElements));
    }
  }
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

absl::Status ReferencePad(const Inputs& in, const AttributeMap& attrs,
                          std::vector<HostTensor>& outs) {
  const HostTensor& x = *in[0];
  std::vector<int64_t> p = *GetInts(attrs, "paddings", "pad");
  double value = *GetFloat(attrs, "value", "pad", 0.0);
  std::vector<int64_t> strides = RowMajorStrides(x.shape);
  int64_t flat = 0;
  ForEachIndex(outs[0].shape, [&](const std::vector<int64_t>& idx) {
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = idx[d] - p[2 * d];
      inside = inside && i >= 0 && i < x.shape[d];
      src += i * strides[d];
    }
    outs[0].data[flat++] = inside ? x.data[src] : value;
  });
  return absl::OkStatus();
}

Tensors ComputePad(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                   const std::vector<ComputeOutput>& outs, const std::string& name) {
  auto p = GetInts(attrs, "paddings", "pad");
  if (!p.ok()) return p.status();
  auto value = GetFloat(attrs, "value", "pad", 0.0);
  if (!value.ok()) return value.status();
  const ir::Tensor& x = in[0];
  ir::Type t = outs[0].type;
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr inside;  // undefined: every dim inside
        std::vector<ir::Expr> src;
        for (size_t d = 0; d < i.size(); ++d) {
          int before = static_cast<int>((*p)[2 * d]);
          ir::Expr j = i[d] - before;
          if (before == 0 && (*p)[2 * d + 1] == 0) {
            src.push_back(i[d]);
            continue;
          }
          ir::Expr in_dim = j >= 0 && j < x->shape[d];
          inside = inside.defined() ? (inside && in_dim) : in_dim;
          src.push_back(ir::max(ir::min(j, x->shape[d] - 1), 0));  // never leaves the buffer
        }
        if (!inside.defined()) return x(src);
        return ir::Select::Make(inside, x(src), ir::MakeConst(t, *value));
      },
      name)};
}

// ----------------------------------------------------------------------------------------------
// one_hot(index, depth, dtype): out[..., j] = index[...] == j.

Descs InferOneHot(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  absl::Status s = CheckIndexDType("one_hot", 0, in[0]);
  if (!s.ok()) return s;
  auto depth = GetInt(attrs, "depth", "one_hot");
  if (!depth.ok()) return depth.status();
  if (*depth < 1) {
    return absl::InvalidArgumentError(absl::StrCat("op one_hot: depth ", *depth, " must be >= 1"));
  }
  auto dtype = GetString(attrs, "dtype", "one_hot", "float32");
  if (!dtype.ok()) return dtype.status();
  auto t = ParseDType(*dtype);
  if (!t.ok())
    return absl::InvalidArgumentError("op one_hot: " + std::string(t.status().message()));
  Shape out = in[0].shape;
  out.push_back(Dim::Known(*depth));
  return std::vector<TensorDesc>{TensorDesc{*t, out}};
}

absl::Status ReferenceOneHot(const Inputs& in, const AttributeMap& attrs,
                             std::vector<HostTensor>& outs) {
  int64_t depth = *GetInt(attrs, "depth", "one_hot");
  const HostTensor& index = *in[0];
  for (int64_t k = 0; k < index.size(); ++k) {
    double v = index.data[k];
    if (v < 0 || v >= static_cast<double>(depth)) {
      return absl::OutOfRangeError(absl::StrCat("op one_hot: index ", static_cast<int64_t>(v),
                                                " (at flat position ", k, " of ", index.Describe(),
                                                ") is out of range [0, ", depth, ")"));
    }
    outs[0].data[k * depth + static_cast<int64_t>(v)] = 1.0;
  }
  return absl::OkStatus();
}

Tensors OneHotCompute(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                      const std::vector<ComputeOutput>& outs, const std::string& name,
                      const char* check) {
  const int64_t depth = *GetInt(attrs, "depth", "one_hot");
  const ir::Tensor index =
      check ? ops::CheckedIndices(in[0], 0, ir::Expr(depth),
                                  absl::StrCat("op one_hot (", name, "): index ",
                                               ops::DescribeIrTensor(in[0]), " with depth ", depth),
                                  name, check)
            : in[0];
  ir::Type t = outs[0].type;
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& i) {
        std::vector<ir::Expr> src(i.begin(), i.end() - 1);
        ir::Expr v = index(src);
        return ir::Select::Make(v == ir::Cast::Make(v.type(), i.back()), ir::MakeConst(t, 1),
                                ir::MakeConst(t, 0));
      },
      name)};
}

Tensors ComputeOneHot(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                      const std::vector<ComputeOutput>& outs, const std::string& name) {
  return OneHotCompute(in, attrs, outs, name, ops::IndexCheckFunction(false));
}

Tensors ComputeOneHotGpu(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                         const std::vector<ComputeOutput>& outs, const std::string& name) {
  return OneHotCompute(in, attrs, outs, name, ops::IndexCheckFunction(true));
}

// ----------------------------------------------------------------------------------------------
// check_index(index, low, high, what): the index itself, once every value is in [low, high).
// Frontends put it where their own ops take indices the compute would otherwise clamp or skip
// (the torch backend's scatters and advanced indexing, whose bounds PyTorch checks); `what`
// starts the error message.

Descs InferCheckIndex(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  absl::Status s = CheckIndexDType("check_index", 0, in[0]);
  if (!s.ok()) return s;
  auto low = GetInt(attrs, "low", "check_index");
  if (!low.ok()) return low.status();
  auto high = GetInt(attrs, "high", "check_index");
  if (!high.ok()) return high.status();
  auto what = GetString(attrs, "what", "check_index", "");
  if (!what.ok()) return what.status();
  if (*low > *high) {
    return absl::InvalidArgumentError(
        absl::StrCat("op check_index: low ", *low, " is above high ", *high));
  }
  return std::vector<TensorDesc>{in[0]};
}

std::string CheckIndexWhat(const AttributeMap& attrs, const std::string& name) {
  std::string what = *GetString(attrs, "what", "check_index", "");
  return what.empty() ? absl::StrCat("op check_index (", name, ")") : what;
}

absl::Status ReferenceCheckIndex(const Inputs& in, const AttributeMap& attrs,
                                 std::vector<HostTensor>& outs) {
  const int64_t low = *GetInt(attrs, "low", "check_index");
  const int64_t high = *GetInt(attrs, "high", "check_index");
  const HostTensor& index = *in[0];
  for (int64_t k = 0; k < index.size(); ++k) {
    double v = index.data[k];
    if (v < static_cast<double>(low) || v >= static_cast<double>(high)) {
      return absl::OutOfRangeError(absl::StrCat(CheckIndexWhat(attrs, "reference"), ": index ",
                                                static_cast<int64_t>(v), " (at position ", k,
                                                ") is out of range [", low, ", ", high, ")"));
    }
  }
  outs[0].data = index.data;
  return absl::OkStatus();
}

Tensors CheckIndexCompute(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                          const std::vector<ComputeOutput>& outs, const std::string& name,
                          const char* check) {
  if (!check) {
    return std::vector<ir::Tensor>{ir::Compute(
        outs[0].shape, [&](const std::vector<ir::Expr>& i) { return in[0](i); }, name)};
  }
  const int64_t low = *GetInt(attrs, "low", "check_index");
  const int64_t high = *GetInt(attrs, "high", "check_index");
  ir::Tensor checked = ops::CheckedIndices(in[0], ir::Expr(low), ir::Expr(high),
                                           CheckIndexWhat(attrs, name), name, check);
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape, [&](const std::vector<ir::Expr>& i) { return checked(i); }, name)};
}

Tensors ComputeCheckIndex(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                          const std::vector<ComputeOutput>& outs, const std::string& name) {
  return CheckIndexCompute(in, attrs, outs, name, ops::IndexCheckFunction(false));
}

Tensors ComputeCheckIndexGpu(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                             const std::vector<ComputeOutput>& outs, const std::string& name) {
  return CheckIndexCompute(in, attrs, outs, name, ops::IndexCheckFunction(true));
}

}  // namespace

void RegisterIndexOps(OpRegistry& r) {
  OpDef gather{"gather",        OpPattern::kInjective, 2, 2, 1, InferGather,
               ReferenceGather, ComputeGather};
  gather.gpu_compute = ComputeGatherGpu;
  r.Register(std::move(gather));
  r.Register(
      OpDef{"split", OpPattern::kInjective, 1, 1, -1, InferSplit, ReferenceSplit, ComputeSplit});
  r.Register(OpDef{"pad", OpPattern::kInjective, 1, 1, 1, InferPad, ReferencePad, ComputePad});
  OpDef one_hot{"one_hot",       OpPattern::kInjective, 1, 1, 1, InferOneHot,
                ReferenceOneHot, ComputeOneHot};
  one_hot.gpu_compute = ComputeOneHotGpu;
  r.Register(std::move(one_hot));
  OpDef check_index{"check_index",       OpPattern::kInjective, 1, 1, 1, InferCheckIndex,
                    ReferenceCheckIndex, ComputeCheckIndex};
  check_index.gpu_compute = ComputeCheckIndexGpu;
  r.Register(std::move(check_index));
}

}  // namespace cinn_like::hlir
