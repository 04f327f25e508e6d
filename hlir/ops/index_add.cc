/// \file index_add (torch.index_add, the backward of an embedding lookup or of a gather along
/// one axis): out = x, then out[..., index[k], ...] += updates[..., k, ...] along `axis` for
/// every k; repeated indices accumulate.
///
/// Inputs: x, index (a 1-d int32/int64 vector of length K), updates (x's dtype and shape with
/// dim `axis` of size K). An out-of-range index is an error naming it, in the reference and in
/// compiled code (hlir/ops/index_check.h: on GPUs with FLAGS_cinn_like_check_indices; without
/// it the compute skips the index, which matches no row). With the attribute
/// skip_out_of_range = true such an index is skipped everywhere, by definition: frontends use
/// it to drop rows on purpose (index `size` for "nowhere"). The compute is a reduction over k with
/// a select (the sum of the updates whose index is this row: work x.size * K), so it needs no
/// atomics and no sort; float16 and bfloat16 accumulate in float32. GPUs run the scatter of
/// hlir/ops/index_add_scatter.h instead (its extern compute: work K * K per column, no atomics,
/// deterministic); CPUs keep the reduction.
#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/index_add_scatter.h"
#include "hlir/ops/index_check.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using Descs = absl::StatusOr<std::vector<TensorDesc>>;
using Inputs = std::vector<const HostTensor*>;
using Tensors = absl::StatusOr<std::vector<ir::Tensor>>;

constexpr char kOp[] = "index_add";

absl::StatusOr<int> Axis(const AttributeMap& attrs, int rank) {
  auto axis = GetInt(attrs, "axis", kOp, 0);
  if (!axis.ok()) return axis.status();
  return NormalizeAxis(*axis, rank, kOp);
}

Descs InferIndexAdd(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  const TensorDesc &x = in[0], &index = in[1], &updates = in[2];
  absl::Status s = ops::CheckDType(kOp, 0, x, ops::DTypeClass::kNumeric);
  if (!s.ok()) return s;
  if (index.dtype != DType::kInt32 && index.dtype != DType::kInt64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op index_add: index (input 1, ", index.ToString(), ") must have dtype int32 or int64"));
  }
  if (index.shape.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op index_add: index (input 1, ", index.ToString(), ") must be a vector (rank 1)"));
  }
  if (updates.dtype != x.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("op index_add: updates (input 2, ",
                                                   updates.ToString(), ") must have x's dtype ",
                                                   DTypeName(x.dtype), "; insert a cast"));
  }
  auto a = Axis(attrs, static_cast<int>(x.shape.size()));
  if (!a.ok()) return a.status();
  auto skip = GetBool(attrs, "skip_out_of_range", kOp, false);
  if (!skip.ok()) return skip.status();
  Shape want = x.shape;
  want[*a] = index.shape[0];
  if (updates.shape != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op index_add: updates (input 2, ", updates.ToString(), ") must have shape ",
        ShapeToString(want), " (x ", x.ToString(), " with axis ", *a, " of the index's length)"));
  }
  return std::vector<TensorDesc>{x};
}

absl::Status ReferenceIndexAdd(const Inputs& in, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) {
  const HostTensor &x = *in[0], &index = *in[1], &updates = *in[2];
  int axis = *Axis(attrs, x.rank());
  int64_t bound = x.shape[axis];
  const bool skip = *GetBool(attrs, "skip_out_of_range", kOp, false);
  outs[0].data = x.data;
  std::vector<int64_t> strides = RowMajorStrides(x.shape);
  int64_t flat = 0;
  absl::Status status = absl::OkStatus();
  ForEachIndex(updates.shape, [&](const std::vector<int64_t>& idx) {
    double v = index.data[idx[axis]];
    if (v < 0 || v >= static_cast<double>(bound)) {
      if (status.ok() && !skip) {
        status = absl::OutOfRangeError(absl::StrCat(
            "op index_add: index ", static_cast<int64_t>(v), " (at position ", idx[axis],
            ") is out of range [0, ", bound, ") of axis ", axis, " of ", x.Describe()));
      }
      ++flat;
      return;
    }
    int64_t dst = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      dst += (static_cast<int>(d) == axis ? static_cast<int64_t>(v) : idx[d]) * strides[d];
    }
    outs[0].data[dst] += updates.data[flat++];
  });
  return status;
}

Tensors IndexAddCompute(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                        const std::vector<ComputeOutput>& outs, const std::string& name,
                        const char* check) {
  const ir::Tensor &x = in[0], &updates = in[2];
  auto axis = Axis(attrs, static_cast<int>(x->shape.size()));
  if (!axis.ok()) return axis.status();
  const int a = *axis;
  if (*GetBool(attrs, "skip_out_of_range", kOp, false)) check = nullptr;
  const ir::Tensor index =
      check ? ops::CheckedIndices(in[1], 0, x->shape[a], ops::AxisIndexWhat(kOp, name, in[1], a, x),
                                  name, check)
            : in[1];
  const ir::Type t = outs[0].type;
  const ir::Type acc = t.is_low_precision_float() ? ir::Float(32) : t;
  ir::IterVar k = ir::ReduceAxis(index->shape[0], "k");
  ir::Tensor sum = ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& i) {
        std::vector<ir::Expr> src = i;
        src[a] = k.var;
        ir::Expr hit = index(k.var) == ir::Cast::Make(index->dtype, i[a]);
        return ir::ReduceSum(
            ir::Select::Make(hit, ops::CastTo(acc, updates(src)), ops::Const(acc, 0)), {k});
      },
      name + "_sum");
  return std::vector<ir::Tensor>{ir::Compute(
      outs[0].shape,
      [&](const std::vector<ir::Expr>& i) {
        return ops::CastTo(t, ops::CastTo(acc, x(i)) + sum(i));
      },
      name)};
}

Tensors ComputeIndexAdd(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                        const std::vector<ComputeOutput>& outs, const std::string& name) {
  return IndexAddCompute(in, attrs, outs, name, ops::IndexCheckFunction(false));
}

Tensors ComputeIndexAddGpu(const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                           const std::vector<ComputeOutput>& outs, const std::string& name) {
  return IndexAddCompute(in, attrs, outs, name, ops::IndexCheckFunction(true));
}

/// GPUs: the scatter (index_add_scatter.h) in place of the reduction over every (row, k) pair.
absl::StatusOr<ExternTensors> ExternIndexAdd(const ir::Target& target,
                                             const std::vector<ir::Tensor>& in,
                                             const AttributeMap& attrs,
                                             const std::vector<ComputeOutput>& outs,
                                             const std::string& name) {
  if (!target.is_gpu()) return ExternTensors{{}, "CPUs compute index_add as a reduction"};
  const ir::Tensor& x = in[0];
  auto axis = Axis(attrs, static_cast<int>(x->shape.size()));
  if (!axis.ok()) return axis.status();
  const char* check = ops::IndexCheckFunction(true);
  if (*GetBool(attrs, "skip_out_of_range", kOp, false)) check = nullptr;
  const ir::Tensor index =
      check ? ops::CheckedIndices(in[1], 0, x->shape[*axis],
                                  ops::AxisIndexWhat(kOp, name, in[1], *axis, x), name, check)
            : in[1];
  return ExternTensors{{ops::IndexAddScatter(x, index, in[2], *axis, name)},
                       "a scatter kernel: the index linked, a thread per update; the first of each "
                       "index sums along its links"};
}

}  // namespace

void RegisterIndexAddOp(OpRegistry& r) {
  // A reduction over the index, not over axes of x: like the pools, it declares no reduce_axes.
  OpDef def{kOp, OpPattern::kReduction, 3, 3, 1, InferIndexAdd, ReferenceIndexAdd, ComputeIndexAdd};
  def.gpu_compute = ComputeIndexAddGpu;
  def.extern_compute = ExternIndexAdd;
  r.Register(std::move(def));
}

}  // namespace cinn_like::hlir
