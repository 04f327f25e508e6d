/// \file Reductions over axes (sum, mean, max, min, prod, argmax, argmin) and the normalizing
/// ops built on them (softmax, log_softmax, layer_norm, rms_norm, batch_norm for inference).
/// Accumulation is in double; max/min propagate NaN and argmax/argmin pick the first maximal
/// (minimal) element with NaN counting as extreme, as PyTorch does.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using ops::DTypeClass;

enum class Reducer : uint8_t { kSum, kMean, kMax, kMin, kProd };

/// The result shape of reducing `axes` (sorted) of `in`.
Shape ReducedShape(const Shape& in, const std::vector<int>& axes, bool keepdim) {
  Shape out;
  size_t k = 0;
  for (int d = 0; d < static_cast<int>(in.size()); ++d) {
    if (k < axes.size() && axes[k] == d) {
      ++k;
      if (keepdim) out.push_back(Dim::Known(1));
    } else {
      out.push_back(in[d]);
    }
  }
  return out;
}

/// For every input element, the flat index of the output element it reduces into.
std::vector<int64_t> ReductionTargets(const std::vector<int64_t>& shape,
                                      const std::vector<int>& axes) {
  std::vector<bool> reduced(shape.size(), false);
  for (int a : axes) reduced[a] = true;
  std::vector<int64_t> targets;
  ForEachIndex(shape, [&](const std::vector<int64_t>& idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!reduced[d]) flat = flat * shape[d] + idx[d];
    }
    targets.push_back(flat);
  });
  return targets;
}

int Rank(const TensorDesc& d) { return static_cast<int>(d.shape.size()); }

/// The op's reduce axes from its attribute "axis" (ops::AxisAttrAxes).
ReduceAxesFn AxisAttr(const std::string& op, std::optional<int64_t> fallback, bool to_end) {
  return [=](const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
    return ops::AxisAttrAxes(op, attrs, Rank(in[0]), fallback, to_end);
  };
}

/// A reduction `name` over its reduce `axes`, with its compute.
OpDef ReductionDef(const std::string& name, ReduceAxesFn axes, ComputeFn compute) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::kReduction;
  def.reduce_axes = std::move(axes);
  def.compute = std::move(compute);
  return def;
}

/// Inference of a reduction of `def`'s reduce axes with attribute "keepdim" (default false):
/// input 0 of class `accepts`; the result has input 0's dtype, or `out` if given.
InferFn InferReduced(const OpDef& def, DTypeClass accepts, std::optional<DType> out) {
  return [name = def.name, axes_of = def.reduce_axes, accepts, out](
             const std::vector<TensorDesc>& in,
             const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    absl::Status s = ops::CheckDType(name, 0, in[0], accepts);
    if (!s.ok()) return s;
    auto axes = axes_of(in, attrs);
    if (!axes.ok()) return axes.status();
    auto keepdim = GetBool(attrs, "keepdim", name, false);
    if (!keepdim.ok()) return keepdim.status();
    return std::vector<TensorDesc>{
        TensorDesc{out.value_or(in[0].dtype), ReducedShape(in[0].shape, *axes, *keepdim)}};
  };
}

ir::ReduceKind ReduceKindOf(Reducer kind) {
  switch (kind) {
    case Reducer::kMax:
      return ir::ReduceKind::kMax;
    case Reducer::kMin:
      return ir::ReduceKind::kMin;
    case Reducer::kProd:
      return ir::ReduceKind::kProd;
    default:  // sum, mean
      return ir::ReduceKind::kSum;
  }
}

void RegisterReduce(OpRegistry& r, const std::string& name, Reducer kind) {
  OpDef def = ReductionDef(
      name,
      [name](const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
        return ops::ReduceAxes(name, attrs, "axes", Rank(in[0]));
      },
      ops::ReduceCompute(name, ReduceKindOf(kind), kind == Reducer::kMean));
  InferFn reduced = InferReduced(
      def, kind == Reducer::kMean ? DTypeClass::kFloat : DTypeClass::kNumeric, std::nullopt);
  def.infer = reduced;
  if (kind == Reducer::kMax || kind == Reducer::kMin) {
    // The max or min of no elements has no value (PyTorch raises: "cannot perform reduction
    // function max on tensor with no elements"); where the result itself is empty, nothing is
    // reduced. A symbolic axis is refused at the call where it is 0 (needs_nonempty_axes).
    def.needs_nonempty_axes = true;
    def.infer = [name, reduced](
                    const std::vector<TensorDesc>& in,
                    const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
      auto out = reduced(in, attrs);
      if (!out.ok()) return out;
      const Shape& result = (*out)[0].shape;
      if (std::any_of(result.begin(), result.end(),
                      [](const Dim& d) { return d == Dim::Known(0); })) {
        return out;
      }
      auto axes = ops::ReduceAxes(name, attrs, "axes", Rank(in[0]));
      if (!axes.ok()) return axes.status();
      for (int a : *axes) {
        if (in[0].shape[a] == Dim::Known(0)) {
          return absl::InvalidArgumentError(absl::StrCat("op ", name, ": axis ", a, " of input 0 (",
                                                         in[0].ToString(), ") is empty: the ",
                                                         name == "reduce_max" ? "max" : "min",
                                                         " of no elements has no "
                                                         "value"));
        }
      }
      return out;
    };
  }
  def.reference = [name, kind](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) -> absl::Status {
    auto axes = ops::ReduceAxes(name, attrs, "axes", in[0]->rank());
    if (!axes.ok()) return axes.status();
    HostTensor& o = outs[0];
    const double inf = std::numeric_limits<double>::infinity();
    double init = kind == Reducer::kMax    ? -inf
                  : kind == Reducer::kMin  ? inf
                  : kind == Reducer::kProd ? 1.0
                                           : 0.0;
    o.data.assign(o.size(), init);
    std::vector<int64_t> targets = ReductionTargets(in[0]->shape, *axes);
    for (int64_t i = 0; i < in[0]->size(); ++i) {
      double v = in[0]->data[i];
      double& acc = o.data[targets[i]];
      switch (kind) {
        case Reducer::kSum:
        case Reducer::kMean:
          acc += v;
          break;
        case Reducer::kProd:
          acc *= v;
          break;
        case Reducer::kMax:
          acc = std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v);
          break;
        case Reducer::kMin:
          acc = std::isnan(acc) || std::isnan(v) ? NAN : std::min(acc, v);
          break;
      }
    }
    if (kind == Reducer::kMean) {
      int64_t count = o.size() ? in[0]->size() / o.size() : 0;
      for (auto& v : o.data) v /= static_cast<double>(count);
    }
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

/// argmax / argmin over the required attribute "axis".
void RegisterArgReduce(OpRegistry& r, const std::string& name, bool is_max) {
  OpDef def =
      ReductionDef(name, AxisAttr(name, std::nullopt, false), ops::ArgReduceCompute(is_max));
  def.needs_nonempty_axes = true;
  InferFn reduced = InferReduced(def, DTypeClass::kNumeric, DType::kInt64);
  def.infer = [name, reduced](
                  const std::vector<TensorDesc>& in,
                  const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    auto out = reduced(in, attrs);
    if (!out.ok()) return out;
    // PyTorch raises for a position among no elements; a symbolic axis is refused at the call
    // where it is 0 (needs_nonempty_axes).
    int axis = static_cast<int>(*NormalizeAxis(*GetInt(attrs, "axis", name), Rank(in[0]), name));
    const Shape& result = (*out)[0].shape;
    const bool no_result =
        std::any_of(result.begin(), result.end(), [](const Dim& d) { return d == Dim::Known(0); });
    if (axis < static_cast<int>(in[0].shape.size()) && in[0].shape[axis] == Dim::Known(0) &&
        !no_result) {
      return absl::InvalidArgumentError(absl::StrCat("op ", name, ": axis ", axis, " of input 0 (",
                                                     in[0].ToString(),
                                                     ") is empty: there is no position to return"));
    }
    return out;
  };
  def.reference = [name, is_max](const std::vector<const HostTensor*>& in,
                                 const AttributeMap& attrs,
                                 std::vector<HostTensor>& outs) -> absl::Status {
    int axis = static_cast<int>(*NormalizeAxis(*GetInt(attrs, "axis", name), in[0]->rank(), name));
    std::vector<int64_t> targets = ReductionTargets(in[0]->shape, {axis});
    std::vector<double> best(outs[0].size(), 0);
    std::vector<bool> seen(outs[0].size(), false);
    std::vector<int64_t> strides = RowMajorStrides(in[0]->shape);
    for (int64_t i = 0; i < in[0]->size(); ++i) {
      int64_t t = targets[i];
      double v = in[0]->data[i];
      int64_t pos = (i / strides[axis]) % in[0]->shape[axis];
      bool better = !seen[t] || (!std::isnan(best[t]) &&
                                 (std::isnan(v) || (is_max ? v > best[t] : v < best[t])));
      if (better) {
        seen[t] = true;
        best[t] = v;
        outs[0].data[t] = static_cast<double>(pos);
      }
    }
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

/// Checks the inputs and attributes of a row op beyond its reduce axes.
using RowCheck = std::function<absl::Status(
    const std::vector<TensorDesc>& in, const AttributeMap& attrs, const std::vector<int>& axes)>;

/// Inference of a row op (softmax, layer_norm): input 0 a float tensor on which `def`'s reduce
/// axes are valid, then `check` (may be null); the result is shaped as input 0.
InferFn InferRowOp(const OpDef& def, RowCheck check) {
  return [name = def.name, axes_of = def.reduce_axes, check](
             const std::vector<TensorDesc>& in,
             const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    absl::Status s = ops::CheckDType(name, 0, in[0], DTypeClass::kFloat);
    if (!s.ok()) return s;
    auto axes = axes_of(in, attrs);
    if (!axes.ok()) return axes.status();
    if (check) s = check(in, attrs, *axes);
    if (!s.ok()) return s;
    return std::vector<TensorDesc>{in[0]};
  };
}

/// softmax / log_softmax over one axis (default -1), max-subtracted.
void RegisterSoftmax(OpRegistry& r, const std::string& name, bool log) {
  OpDef def = ReductionDef(name, AxisAttr(name, -1, false), ops::SoftmaxCompute(log));
  def.infer = InferRowOp(def, nullptr);
  def.reference = [name, log](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                              std::vector<HostTensor>& outs) -> absl::Status {
    int axis = *NormalizeAxis(*GetInt(attrs, "axis", name, -1), in[0]->rank(), name);
    std::vector<int64_t> targets = ReductionTargets(in[0]->shape, {axis});
    int64_t groups = in[0]->shape[axis] ? in[0]->size() / in[0]->shape[axis] : 0;
    std::vector<double> mx(groups, -std::numeric_limits<double>::infinity()), sum(groups, 0);
    const auto& x = in[0]->data;
    for (int64_t i = 0; i < in[0]->size(); ++i) mx[targets[i]] = std::max(mx[targets[i]], x[i]);
    for (int64_t i = 0; i < in[0]->size(); ++i) sum[targets[i]] += std::exp(x[i] - mx[targets[i]]);
    for (int64_t i = 0; i < in[0]->size(); ++i) {
      double shifted = x[i] - mx[targets[i]];
      outs[0].data[i] =
          log ? shifted - std::log(sum[targets[i]]) : std::exp(shifted) / sum[targets[i]];
    }
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

/// Checks that an optional affine parameter (input `i`) has the normalized trailing shape.
absl::Status CheckParam(const std::string& op, const std::vector<TensorDesc>& in, size_t i,
                        const Shape& expected, const char* what) {
  if (i >= in.size()) return absl::OkStatus();
  if (in[i].dtype != in[0].dtype || in[i].shape != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": ", what, " (input ", i, ") is ", in[i].ToString(), ", expected ",
                     DTypeName(in[0].dtype), ShapeToString(expected)));
  }
  return absl::OkStatus();
}

/// layer_norm(x, [scale], [bias]) normalizes over the axes [axis, rank) (attribute "axis",
/// default -1: the last); rms_norm(x, [scale]) likewise without centering. epsilon 1e-5.
void RegisterNorm(OpRegistry& r, const std::string& name, bool rms) {
  OpDef def = ReductionDef(name, AxisAttr(name, -1, true), ops::NormCompute(rms));
  def.max_inputs = rms ? 2 : 3;
  def.infer = InferRowOp(def, [name](const std::vector<TensorDesc>& in, const AttributeMap& attrs,
                                     const std::vector<int>& axes) {
    auto eps = GetFloat(attrs, "epsilon", name, 1e-5);
    if (!eps.ok()) return eps.status();
    Shape normalized(in[0].shape.begin() + axes[0], in[0].shape.end());
    absl::Status s = CheckParam(name, in, 1, normalized, "scale");
    if (s.ok()) s = CheckParam(name, in, 2, normalized, "bias");
    return s;
  });
  def.reference = [name, rms](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                              std::vector<HostTensor>& outs) -> absl::Status {
    int axis = *NormalizeAxis(*GetInt(attrs, "axis", name, -1), in[0]->rank(), name);
    double eps = *GetFloat(attrs, "epsilon", name, 1e-5);
    int64_t inner = 1;
    for (int d = axis; d < in[0]->rank(); ++d) inner *= in[0]->shape[d];
    const auto& x = in[0]->data;
    for (int64_t base = 0; base < in[0]->size(); base += inner) {
      double mean = 0, sq = 0;
      for (int64_t k = 0; k < inner; ++k) mean += x[base + k];
      mean = rms ? 0.0 : mean / inner;
      for (int64_t k = 0; k < inner; ++k) sq += (x[base + k] - mean) * (x[base + k] - mean);
      double inv = 1.0 / std::sqrt(sq / inner + eps);
      for (int64_t k = 0; k < inner; ++k) {
        double y = (x[base + k] - mean) * inv;
        if (in.size() > 1) y *= in[1]->data[k];
        if (in.size() > 2) y += in[2]->data[k];
        outs[0].data[base + k] = y;
      }
    }
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

/// batch_norm for inference: (x - mean) / sqrt(variance + epsilon) * scale + bias with the
/// per-channel inputs scale, bias, mean, variance over the channel axis (attribute "axis",
/// default 1 as in NCHW), computed as x * s + t with s = scale / sqrt(variance + epsilon) and
/// t = bias - mean * s, as PyTorch's kernels and SimplifyBatchNorm do (the forms differ where a
/// parameter is infinite: inf - inf is NaN in this one).
void RegisterBatchNorm(OpRegistry& r) {
  OpDef def;
  def.name = "batch_norm";
  def.pattern = OpPattern::kBroadcast;
  def.compute = ops::BatchNormCompute();
  def.min_inputs = def.max_inputs = 5;
  def.infer = [](const std::vector<TensorDesc>& in,
                 const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    absl::Status s = ops::CheckDType("batch_norm", 0, in[0], DTypeClass::kFloat);
    if (!s.ok()) return s;
    auto axis = GetInt(attrs, "axis", "batch_norm", 1);
    if (!axis.ok()) return axis.status();
    auto a = NormalizeAxis(*axis, static_cast<int>(in[0].shape.size()), "batch_norm");
    if (!a.ok()) return a.status();
    auto eps = GetFloat(attrs, "epsilon", "batch_norm", 1e-5);
    if (!eps.ok()) return eps.status();
    const char* names[] = {"scale", "bias", "mean", "variance"};
    for (size_t i = 1; i < 5; ++i) {
      s = CheckParam("batch_norm", in, i, {in[0].shape[*a]}, names[i - 1]);
      if (!s.ok()) return s;
    }
    return std::vector<TensorDesc>{in[0]};
  };
  def.reference = [](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                     std::vector<HostTensor>& outs) -> absl::Status {
    int axis = *NormalizeAxis(*GetInt(attrs, "axis", "batch_norm", 1), in[0]->rank(), "batch_norm");
    double eps = *GetFloat(attrs, "epsilon", "batch_norm", 1e-5);
    std::vector<int64_t> strides = RowMajorStrides(in[0]->shape);
    for (int64_t i = 0; i < in[0]->size(); ++i) {
      int64_t c = (i / strides[axis]) % in[0]->shape[axis];
      double s = in[1]->data[c] / std::sqrt(in[4]->data[c] + eps);
      outs[0].data[i] = in[0]->data[i] * s + (in[2]->data[c] - in[3]->data[c] * s);
    }
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

}  // namespace

void RegisterReductionOps(OpRegistry& r) {
  RegisterReduce(r, "reduce_sum", Reducer::kSum);
  RegisterReduce(r, "reduce_mean", Reducer::kMean);
  RegisterReduce(r, "reduce_max", Reducer::kMax);
  RegisterReduce(r, "reduce_min", Reducer::kMin);
  RegisterReduce(r, "reduce_prod", Reducer::kProd);
  RegisterArgReduce(r, "argmax", true);
  RegisterArgReduce(r, "argmin", false);
  RegisterSoftmax(r, "softmax", false);
  RegisterSoftmax(r, "log_softmax", true);
  RegisterNorm(r, "layer_norm", false);
  RegisterNorm(r, "rms_norm", true);
  RegisterBatchNorm(r);
}

}  // namespace cinn_like::hlir
