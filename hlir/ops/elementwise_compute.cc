/// \file The elementwise computes in lang, built from each op's scalar function (given at its
/// registration, hlir/ops/elementwise.cc): floats compute in their own type, float16 and
/// bfloat16 in float32 (rounded once, at the store).
#include "hlir/ops/compute_util.h"

namespace cinn_like::hlir::ops {

using ir::Expr;

ComputeFn UnaryCompute(UnaryScalarMaker make) {
  return [make](const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                const std::vector<ComputeOutput>& outs,
                const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    ir::Type out_type = outs[0].type;
    auto scalar = make(attrs, out_type);  // validates the attributes: the body cannot fail
    if (!scalar.ok()) return scalar.status();
    ir::Tensor x = in[0];
    ir::Tensor y = ir::Compute(
        outs[0].shape, [&](const Indices& i) { return CastTo(out_type, (*scalar)(Widen(x(i)))); },
        name);
    return std::vector<ir::Tensor>{y};
  };
}

ComputeFn BinaryCompute(BinaryScalarMaker make) {
  return [make](const std::vector<ir::Tensor>& in, const AttributeMap& attrs,
                const std::vector<ComputeOutput>& outs,
                const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    auto scalar = make(attrs, in[0]->dtype);
    if (!scalar.ok()) return scalar.status();
    ir::Type out_type = outs[0].type;
    ir::Tensor a = in[0], b = in[1];
    ir::Tensor y = ir::Compute(
        outs[0].shape,
        [&](const Indices& i) {
          Expr x = Widen(BroadcastRead(a, i)), z = Widen(BroadcastRead(b, i));
          if (x.type() != z.type()) {  // logical ops accept mixed dtypes
            x = ToBool(x);
            z = ToBool(z);
          }
          return CastTo(out_type, (*scalar)(x, z));
        },
        name);
    return std::vector<ir::Tensor>{y};
  };
}

ComputeFn CastCompute() {
  return [](const std::vector<ir::Tensor>& in, const AttributeMap&,
            const std::vector<ComputeOutput>& outs,
            const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    ir::Type t = outs[0].type;
    ir::Tensor x = in[0];
    return std::vector<ir::Tensor>{ir::Compute(
        outs[0].shape, [&](const Indices& i) { return CastTo(t, x(i)); }, name)};
  };
}

ComputeFn WhereCompute() {
  return [](const std::vector<ir::Tensor>& in, const AttributeMap&,
            const std::vector<ComputeOutput>& outs,
            const std::string& name) -> absl::StatusOr<std::vector<ir::Tensor>> {
    return std::vector<ir::Tensor>{ir::Compute(
        outs[0].shape,
        [&](const Indices& i) {
          return ir::Select::Make(BroadcastRead(in[0], i), BroadcastRead(in[1], i),
                                  BroadcastRead(in[2], i));
        },
        name)};
  };
}

}  // namespace cinn_like::hlir::ops
