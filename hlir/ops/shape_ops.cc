/// \file Injective ops that move or create elements: reshape, transpose, broadcast_to,
/// expand_dims, squeeze, concat, slice, fill, arange.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using Descs = absl::StatusOr<std::vector<TensorDesc>>;
using Inputs = std::vector<const HostTensor*>;

// reshape of a static shape to static sizes (int64 arithmetic, overflow refused).
Descs InferStaticReshape(const TensorDesc& x, const std::vector<int64_t>& shape) {
  int64_t count = NumElements(x.shape), known = 1;
  int infer_at = -1;
  bool overflow = false;  // a product past int64 cannot match any tensor's count
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == -1 && infer_at < 0) {
      infer_at = static_cast<int>(i);
    } else if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("op reshape: target shape [",
                                                     absl::StrJoin(shape, ", "),
                                                     "] may hold one -1 and sizes >= 0"));
    } else {
      overflow = overflow || __builtin_mul_overflow(known, d, &known);
    }
  }
  std::vector<int64_t> out = shape;
  if (infer_at >= 0 && known > 0 && count % known == 0) out[infer_at] = count / known;
  int64_t total = 1;
  for (int64_t d : out) overflow = overflow || __builtin_mul_overflow(total, d, &total);
  if (overflow || total != count || (infer_at >= 0 && known == 0)) {
    return absl::InvalidArgumentError(absl::StrCat("op reshape: cannot reshape ", x.ToString(),
                                                   " (", count, " elements) to [",
                                                   absl::StrJoin(shape, ", "), "] (",
                                                   infer_at >= 0 ? "no size for -1 fits"
                                                   : overflow    ? "more elements than int64 holds"
                                                                 : absl::StrCat(total, " elements"),
                                                   ")"));
  }
  return std::vector<TensorDesc>{TensorDesc{x.dtype, MakeShape(out)}};
}

// reshape: attribute "shape" (an int list, or a shape with symbolic sizes), one entry may be
// -1 (inferred); the element count must match (as polynomials where sizes are symbolic).
Descs InferReshape(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  auto shape = GetShape(attrs, "shape", "reshape");
  if (!shape.ok()) return shape.status();
  if (IsStatic(in[0].shape) && IsStatic(*shape))
    return InferStaticReshape(in[0], StaticDims(*shape));
  SymExpr count = ElementCount(in[0].shape), known = SymExpr::Constant(1);
  int infer_at = -1;
  for (size_t i = 0; i < shape->size(); ++i) {
    const Dim& d = (*shape)[i];
    if (!d.is_symbolic() && d.value == -1 && infer_at < 0) {
      infer_at = static_cast<int>(i);
    } else if (!d.is_symbolic() && d.value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op reshape: target shape ", ShapeToString(*shape), " may hold one -1 and sizes >= 0"));
    } else {
      known = known * d.expr();
    }
  }
  Shape out = *shape;
  bool fits = true;
  if (infer_at >= 0) {
    std::optional<SymExpr> rest = count.DivideExactly(known);
    fits = rest.has_value() && !rest->overflowed();
    if (fits) out[infer_at] = Dim::FromExpr(*rest);
  } else {
    fits = !known.overflowed() && known == count;
  }
  if (!fits) {
    return absl::InvalidArgumentError(
        absl::StrCat("op reshape: cannot reshape ", in[0].ToString(), " (", count.ToString(),
                     " elements) to ", ShapeToString(*shape), " (",
                     infer_at >= 0 ? "no size for -1 is a product of its symbols"
                                   : absl::StrCat(known.ToString(), " elements"),
                     ")"));
  }
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

absl::Status CopyData(const Inputs& in, const AttributeMap&, std::vector<HostTensor>& outs) {
  outs[0].data = in[0]->data;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> Permutation(const TensorDesc& x, const AttributeMap& attrs) {
  int rank = static_cast<int>(x.shape.size());
  auto perm = GetInts(attrs, "perm", "transpose");
  if (!perm.ok()) return perm.status();
  std::vector<int64_t> sorted = *perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int>(sorted.size()) == rank;
  for (int i = 0; ok && i < rank; ++i) ok = sorted[i] == i;
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("op transpose: perm [", absl::StrJoin(*perm, ", "),
                     "] is not a permutation of the ", rank, " axes of ", x.ToString()));
  }
  return *perm;
}

Descs InferTranspose(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  auto perm = Permutation(in[0], attrs);
  if (!perm.ok()) return perm.status();
  Shape out;
  for (int64_t p : *perm) out.push_back(in[0].shape[p]);
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

absl::Status ReferenceTranspose(const Inputs& in, const AttributeMap& attrs,
                                std::vector<HostTensor>& outs) {
  std::vector<int64_t> perm = *GetInts(attrs, "perm", "transpose");
  std::vector<int64_t> strides = RowMajorStrides(in[0]->shape);
  int64_t flat = 0;
  ForEachIndex(outs[0].shape, [&](const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * strides[perm[d]];
    outs[0].data[flat++] = in[0]->data[src];
  });
  return absl::OkStatus();
}

Descs InferBroadcastTo(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  auto shape = GetShape(attrs, "shape", "broadcast_to");
  if (!shape.ok()) return shape.status();
  const Shape& target = *shape;
  auto b = BroadcastShapes(in[0].shape, target);
  if (!b.ok() || *b != target) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op broadcast_to: ", in[0].ToString(), " cannot be broadcast to ", ShapeToString(target)));
  }
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, target}};
}

absl::Status ReferenceBroadcastTo(const Inputs& in, const AttributeMap&,
                                  std::vector<HostTensor>& outs) {
  int64_t flat = 0;
  ForEachIndex(outs[0].shape, [&](const std::vector<int64_t>& idx) {
    outs[0].data[flat++] = in[0]->data[BroadcastIndex(in[0]->shape, idx)];
  });
  return absl::OkStatus();
}

// expand_dims: attribute "axes", positions in the result where size-1 dims are inserted.
Descs InferExpandDims(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  auto axes = GetInts(attrs, "axes", "expand_dims");
  if (!axes.ok()) return axes.status();
  int rank = static_cast<int>(in[0].shape.size() + axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    auto n = NormalizeAxis(a, rank, "expand_dims");
    if (!n.ok()) return n.status();
    if (inserted[*n])
      return absl::InvalidArgumentError("op expand_dims: attribute 'axes' names an axis twice");
    inserted[*n] = true;
  }
  Shape out;
  size_t k = 0;
  for (int d = 0; d < rank; ++d) out.push_back(inserted[d] ? Dim::Known(1) : in[0].shape[k++]);
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

// squeeze: attribute "axes" (absent: every size-1 dim); each named dim must have size 1.
Descs InferSqueeze(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  int rank = static_cast<int>(in[0].shape.size());
  auto axes = GetInts(attrs, "axes", "squeeze", std::vector<int64_t>{});
  if (!axes.ok()) return axes.status();
  std::vector<bool> drop(rank, false);
  for (int64_t a : *axes) {
    auto n = NormalizeAxis(a, rank, "squeeze");
    if (!n.ok()) return n.status();
    if (!in[0].shape[*n].is_one()) {
      return absl::InvalidArgumentError(absl::StrCat("op squeeze: dim ", *n, " of ",
                                                     in[0].ToString(), " has size ",
                                                     in[0].shape[*n].ToString(), ", not 1"));
    }
    drop[*n] = true;
  }
  Shape out;
  for (int d = 0; d < rank; ++d) {
    bool squeeze = axes->empty() ? in[0].shape[d].is_one() : drop[d];
    if (!squeeze) out.push_back(in[0].shape[d]);
  }
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

Descs InferConcat(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  auto axis = GetInt(attrs, "axis", "concat", 0);
  if (!axis.ok()) return axis.status();
  int rank = static_cast<int>(in[0].shape.size());
  auto a = NormalizeAxis(*axis, rank, "concat");
  if (!a.ok()) return a.status();
  absl::Status s = ops::CheckSameDType("concat", in);
  if (!s.ok()) return s;
  Shape out = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
    bool ok = static_cast<int>(in[i].shape.size()) == rank;
    for (int d = 0; ok && d < rank; ++d) ok = d == *a || in[i].shape[d] == out[d];
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("op concat: input ", i, " ", in[i].ToString(),
                                                     " does not match input 0 ", in[0].ToString(),
                                                     " outside axis ", *a));
    }
    if (out[*a].is_symbolic() || in[i].shape[*a].is_symbolic()) {
      return absl::InvalidArgumentError("op concat: the concatenated axis must be static for now");
    }
    out[*a].value += in[i].shape[*a].value;
  }
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

absl::Status ReferenceConcat(const Inputs& in, const AttributeMap& attrs,
                             std::vector<HostTensor>& outs) {
  int axis = *NormalizeAxis(*GetInt(attrs, "axis", "concat", 0), in[0]->rank(), "concat");
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= in[0]->shape[d];
  int64_t flat = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* t : in) {
      int64_t chunk = outer ? t->size() / outer : 0;
      for (int64_t k = 0; k < chunk; ++k) outs[0].data[flat++] = t->data[o * chunk + k];
    }
  }
  return absl::OkStatus();
}

/// slice: attributes axes, starts, ends (clamped as Python slices do) and optional steps (> 0).
struct SliceSpec {
  std::vector<int64_t> start, step;  // per dim of the input
};
absl::StatusOr<SliceSpec> ParseSlice(const TensorDesc& x, const AttributeMap& attrs, Shape* out) {
  const std::string op = "slice";
  auto axes = GetInts(attrs, "axes", op);
  if (!axes.ok()) return axes.status();
  auto starts = GetInts(attrs, "starts", op);
  if (!starts.ok()) return starts.status();
  auto ends = GetInts(attrs, "ends", op);
  if (!ends.ok()) return ends.status();
  auto steps = GetInts(attrs, "steps", op, std::vector<int64_t>(axes->size(), 1));
  if (!steps.ok()) return steps.status();
  if (starts->size() != axes->size() || ends->size() != axes->size() ||
      steps->size() != axes->size()) {
    return absl::InvalidArgumentError(
        "op slice: axes, starts, ends and steps must have one entry each");
  }
  int rank = static_cast<int>(x.shape.size());
  SliceSpec spec{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1)};
  *out = x.shape;
  for (size_t i = 0; i < axes->size(); ++i) {
    auto a = NormalizeAxis((*axes)[i], rank, op);
    if (!a.ok()) return a.status();
    if (x.shape[*a].is_symbolic()) {
      return absl::InvalidArgumentError(absl::StrCat("op slice: axis ", *a, " of ", x.ToString(),
                                                     " is symbolic; only static axes are sliced "
                                                     "for now"));
    }
    int64_t size = x.shape[*a].value, step = (*steps)[i];
    if (step <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("op slice: step ", step, " on axis ", *a, " must be positive"));
    }
    auto clamp = [size](int64_t v) {
      return std::min(std::max(v < 0 ? v + size : v, int64_t{0}), size);
    };
    int64_t b = clamp((*starts)[i]), e = clamp((*ends)[i]);
    spec.start[*a] = b;
    spec.step[*a] = step;
    (*out)[*a] = Dim::Known(e > b ? (e - b + step - 1) / step : 0);
  }
  return spec;
}

Descs InferSlice(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  Shape out;
  auto spec = ParseSlice(in[0], attrs, &out);
  if (!spec.ok()) return spec.status();
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

absl::Status ReferenceSlice(const Inputs& in, const AttributeMap& attrs,
                            std::vector<HostTensor>& outs) {
  Shape out;
  TensorDesc x{in[0]->dtype, MakeShape(in[0]->shape)};
  auto spec = ParseSlice(x, attrs, &out);
  if (!spec.ok()) return spec.status();
  std::vector<int64_t> strides = RowMajorStrides(in[0]->shape);
  int64_t flat = 0;
  ForEachIndex(outs[0].shape, [&](const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (spec->start[d] + idx[d] * spec->step[d]) * strides[d];
    outs[0].data[flat++] = in[0]->data[src];
  });
  return absl::OkStatus();
}

/// slice in lang: in[start + out * step] per dim.
absl::StatusOr<std::vector<ir::Tensor>> ComputeSlice(const std::vector<ir::Tensor>& in,
                                                     const AttributeMap& attrs,
                                                     const std::vector<ComputeOutput>& outs,
                                                     const std::string& name) {
  TensorDesc x;
  // Symbolic extents stand as a symbol: ParseSlice slices static axes only.
  for (const ir::Expr& e : in[0]->shape) {
    auto v = ir::AsConstInt(e);
    x.shape.push_back(v ? Dim::Known(*v) : Dim::Symbol("symbolic"));
  }
  Shape out;
  auto spec = ParseSlice(x, attrs, &out);
  if (!spec.ok()) return spec.status();
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& o) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < o.size(); ++d) {
          idx.push_back(ir::IndexConst(spec->start[d]) + o[d] * ir::IndexConst(spec->step[d]));
        }
        return in[0](idx);
      },
      name)};
}

// fill: no inputs; attributes shape, value, dtype (default float32).
Descs InferFill(const std::vector<TensorDesc>&, const AttributeMap& attrs) {
  auto shape = GetShape(attrs, "shape", "fill");
  if (!shape.ok()) return shape.status();
  auto value = GetFloat(attrs, "value", "fill");
  if (!value.ok()) return value.status();
  auto dtype = GetString(attrs, "dtype", "fill", "float32");
  if (!dtype.ok()) return dtype.status();
  auto t = ParseDType(*dtype);
  if (!t.ok()) return absl::InvalidArgumentError("op fill: " + std::string(t.status().message()));
  absl::Status fits = CheckScalarFits("fill", "value", *value, *t);
  if (!fits.ok()) return fits;
  for (const Dim& d : *shape) {
    if (!d.is_symbolic() && d.value < 0)
      return absl::InvalidArgumentError("op fill: shape sizes must be >= 0");
  }
  return std::vector<TensorDesc>{TensorDesc{*t, *shape}};
}

absl::Status ReferenceFill(const Inputs&, const AttributeMap& attrs,
                           std::vector<HostTensor>& outs) {
  outs[0].data.assign(outs[0].size(), *GetFloat(attrs, "value", "fill"));
  return absl::OkStatus();
}

// arange: no inputs; attributes start (default 0), end, step (default 1), dtype (default int64);
// or start, step and size (the length, symbolic too) in place of end.
Descs InferArange(const std::vector<TensorDesc>&, const AttributeMap& attrs) {
  auto start = GetFloat(attrs, "start", "arange", 0.0);
  if (!start.ok()) return start.status();
  if (attrs.count("size")) {  // the length given (symbolic: arange(s0)), not `end`
    auto size = GetShape(attrs, "size", "arange");
    if (!size.ok()) return size.status();
    auto dtype = ParseDType(*GetString(attrs, "dtype", "arange", "int64"));
    if (size->size() != 1 || (!(*size)[0].is_symbolic() && (*size)[0].value < 0) || !dtype.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op arange: attribute 'size' ", ShapeToString(*size),
                       " is one length >= 0 (and dtype a dtype name)"));
    }
    return std::vector<TensorDesc>{TensorDesc{*dtype, *size}};
  }
  auto end = GetFloat(attrs, "end", "arange");
  if (!end.ok()) return end.status();
  auto step = GetFloat(attrs, "step", "arange", 1.0);
  if (!step.ok()) return step.status();
  auto dtype = GetString(attrs, "dtype", "arange", "int64");
  if (!dtype.ok()) return dtype.status();
  auto t = ParseDType(*dtype);
  if (!t.ok()) return absl::InvalidArgumentError("op arange: " + std::string(t.status().message()));
  if (*step == 0) return absl::InvalidArgumentError("op arange: step must not be 0");
  const double length = std::ceil((*end - *start) / *step);
  if (!(length <= static_cast<double>(kMaxElements))) {  // NaN too: start or end not finite
    return absl::OutOfRangeError(absl::StrCat("op arange: start ", *start, ", end ", *end,
                                              ", step ", *step, " give ", length,
                                              " elements; at most ", kMaxElements));
  }
  // A negative length (end before start) is empty; it may be far past int64's range.
  const int64_t n = length > 0 ? static_cast<int64_t>(length) : 0;
  return std::vector<TensorDesc>{TensorDesc{*t, MakeShape({n})}};
}

absl::Status ReferenceArange(const Inputs&, const AttributeMap& attrs,
                             std::vector<HostTensor>& outs) {
  double start = *GetFloat(attrs, "start", "arange", 0.0),
         step = *GetFloat(attrs, "step", "arange", 1.0);
  for (int64_t i = 0; i < outs[0].size(); ++i) outs[0].data[i] = start + i * step;
  return absl::OkStatus();
}

void Add(OpRegistry& r, const char* name, int min_in, int max_in, InferFn infer, ReferenceFn ref,
         ComputeFn compute) {
  r.Register(OpDef{name, OpPattern::kInjective, min_in, max_in, 1, std::move(infer), std::move(ref),
                   std::move(compute)});
}

/// An op of no inputs whose value its attributes give (OpDef::compile_time_value).
void AddKnown(OpRegistry& r, const char* name, InferFn infer, ReferenceFn ref, ComputeFn compute) {
  OpDef def{name,           OpPattern::kInjective, 0, 0, 1, std::move(infer),
            std::move(ref), std::move(compute)};
  def.compile_time_value = true;
  r.Register(std::move(def));
}

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  Add(r, "reshape", 1, 1, InferReshape, CopyData, ops::ReshapeCompute());
  Add(r, "transpose", 1, 1, InferTranspose, ReferenceTranspose, ops::TransposeCompute());
  Add(r, "broadcast_to", 1, 1, InferBroadcastTo, ReferenceBroadcastTo, ops::BroadcastToCompute());
  Add(r, "expand_dims", 1, 1, InferExpandDims, CopyData, ops::ExpandDimsCompute());
  Add(r, "squeeze", 1, 1, InferSqueeze, CopyData, ops::SqueezeCompute());
  Add(r, "concat", 1, -1, InferConcat, ReferenceConcat, ops::ConcatCompute());
  Add(r, "slice", 1, 1, InferSlice, ReferenceSlice, ComputeSlice);
  // fill and arange are known from their attributes alone (OpDef::compile_time_value): each
  // reader computes them, in any group. A fill read by several groups (common-subexpression
  // elimination shares one among every layer's GELU) was a kernel writing a whole tensor.
  AddKnown(r, "fill", InferFill, ReferenceFill, ops::FillCompute());
  AddKnown(r, "arange", InferArange, ReferenceArange, ops::ArangeCompute());
}

}  // namespace cinn_like::hlir
