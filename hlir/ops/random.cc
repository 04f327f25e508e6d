/// \file random_uniform: uniform random numbers on [0, 1) from the counter-based generator
/// Philox4x32-10 (ir/philox.h), the source of the random ops a framework hands in (dropout,
/// rand_like, bernoulli: cinn_like/python/cinn_like/torch/ops/random.py builds them from it).
///
/// Inputs: seed, an int64 tensor of one element (shape [1]) read at run time, so one compiled
/// Program draws new numbers at each call from the seed its caller passes; optionally a second
/// int64 [1] tensor added to the stream attribute (a backward that draws again the numbers of a
/// forward op whose stream it reads as a value: attention's dropout mask). Attributes: shape
/// (the output's, symbolic sizes allowed), dtype (a float type, default float32) and stream (an
/// int >= 0, default 0): ops of one Program that must draw independent numbers from one seed
/// take different streams. The element at row-major index i is PhiloxUniform(seed, stream, i)
/// (stream: the attribute plus the second input's value),
/// a multiple of 2^-24 computed in float32 and rounded to dtype (float16 and bfloat16 may round
/// the largest values up to 1: frontends that promise [0, 1) clamp first; float64 gets 24
/// random bits). The same seed, stream and shape give the same tensor on every
/// target and in the reference interpreter, bit for bit; seeds above 2^53 are not held exactly
/// by the reference interpreter's doubles (frontends draw seeds below 2^53).
#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"
#include "ir/philox.h"

namespace cinn_like::hlir {
namespace {

using Descs = absl::StatusOr<std::vector<TensorDesc>>;

constexpr char kOp[] = "random_uniform";

Descs InferRandomUniform(const std::vector<TensorDesc>& in, const AttributeMap& attrs) {
  for (size_t i = 0; i < in.size(); ++i) {
    const TensorDesc& t = in[i];
    if (t.dtype != DType::kInt64 || t.shape.size() != 1 || t.shape[0].is_symbolic() ||
        t.shape[0].value != 1) {
      return absl::InvalidArgumentError(absl::StrCat("op random_uniform: ", i ? "stream" : "seed",
                                                     " (input ", i, ", ", t.ToString(),
                                                     ") must be one int64 element, shape [1]"));
    }
  }
  auto shape = GetShape(attrs, "shape", kOp);
  if (!shape.ok()) return shape.status();
  for (const Dim& d : *shape) {
    if (!d.is_symbolic() && d.value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("op random_uniform: shape ", ShapeToString(*shape), " has a negative size"));
    }
  }
  auto dtype = GetString(attrs, "dtype", kOp, "float32");
  if (!dtype.ok()) return dtype.status();
  auto t = ParseDType(*dtype);
  if (!t.ok() || !IsFloat(*t)) {
    return absl::InvalidArgumentError(
        absl::StrCat("op random_uniform: dtype '", *dtype,
                     "' must be a float type (float16, bfloat16, float32, float64)"));
  }
  auto stream = GetInt(attrs, "stream", kOp, 0);
  if (!stream.ok()) return stream.status();
  if (*stream < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("op random_uniform: stream ", *stream, " must be >= 0"));
  }
  return std::vector<TensorDesc>{TensorDesc{*t, *shape}};
}

absl::Status ReferenceRandomUniform(const std::vector<const HostTensor*>& in,
                                    const AttributeMap& attrs, std::vector<HostTensor>& outs) {
  const auto seed = static_cast<uint64_t>(static_cast<int64_t>(in[0]->data[0]));
  auto stream = static_cast<uint64_t>(*GetInt(attrs, "stream", kOp, 0));
  if (in.size() > 1) stream += static_cast<uint64_t>(static_cast<int64_t>(in[1]->data[0]));
  std::vector<double>& out = outs[0].data;
  for (size_t i = 0; i < out.size(); ++i) out[i] = ir::PhiloxUniform(seed, stream, i);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ir::Tensor>> ComputeRandomUniform(const std::vector<ir::Tensor>& in,
                                                             const AttributeMap& attrs,
                                                             const std::vector<ComputeOutput>& outs,
                                                             const std::string& name) {
  auto stream = GetInt(attrs, "stream", kOp, 0);
  if (!stream.ok()) return stream.status();
  const ir::Tensor& seed = in[0];
  const std::vector<ir::Expr> shape = outs[0].shape;
  const ir::Type t = outs[0].type;
  const ir::Type i64 = ir::Int(64);
  ir::Expr stream_value = ir::Cast::Make(i64, ir::Expr(*stream));
  if (in.size() > 1) stream_value = stream_value + in[1]({ir::Expr(0)});
  return std::vector<ir::Tensor>{ir::Compute(
      shape,
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr u = ops::PhiloxAt(seed({ir::Expr(0)}), stream_value, shape, i);
        return ops::CastTo(t, u);
      },
      name)};
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  OpDef def{kOp,
            OpPattern::kBroadcast,
            1,
            2,
            1,
            InferRandomUniform,
            ReferenceRandomUniform,
            ComputeRandomUniform};
  r.Register(std::move(def));
}

}  // namespace cinn_like::hlir
