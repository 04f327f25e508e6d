/// \file RegisterUnary and RegisterBinary: an elementwise op's OpDef from its scalar functions.
#include "hlir/ops/elementwise_def.h"

#include <cmath>
#include <limits>
#include <utility>
#include <variant>
#include <vector>

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;

/// The dtype whose IR type is `t` (the inverse of ToIrType).
DType DTypeOf(const ir::Type& t) {
  for (DType d : {DType::kBool, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64,
                  DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    if (ToIrType(d) == t) return d;
  }
  return DType::kFloat64;
}

/// Whether an attribute in `attrs` is a finite, nonzero float that float32 cannot hold: past its
/// range, or below half its smallest subnormal.
bool HasFloatAttrPastFloat32(const AttributeMap& attrs) {
  for (const auto& [name, a] : attrs) {
    const double* v = std::get_if<double>(&a);
    if (v == nullptr || !std::isfinite(*v) || *v == 0) continue;
    const double m = std::fabs(*v);
    if (m > std::numeric_limits<float>::max() ||
        m < static_cast<double>(std::numeric_limits<float>::denorm_min()) / 2) {
      return true;
    }
  }
  return false;
}

}  // namespace

TensorDesc WithDType(TensorDesc d, DType t) {
  d.dtype = t;
  return d;
}

void RegisterUnary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                   UnaryMaker make) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::kElementwise;
  def.compute = UnaryCompute([name, make](const AttributeMap& attrs,
                                          const ir::Type& out) -> absl::StatusOr<UnaryScalar> {
    auto fns = make(attrs, name);
    if (!fns.ok()) return fns.status();
    UnaryScalar lang = fns->rounded16 && out.is_low_precision_float() ? fns->rounded16 : fns->lang;
    if (!HasFloatAttrPastFloat32(attrs)) return lang;
    // Such an attribute is applied in float64, as the reference applies it, not as an
    // infinity or a zero (softplus's x * beta / beta, elu's alpha * expm1(-0): NaN).
    return [lang](const Expr& x) {
      return lang(x.type() == ir::Float(32) ? ir::Cast::Make(ir::Float(64), x) : x);
    };
  });
  def.infer = [name, accepts, out, make](
                  const std::vector<TensorDesc>& in,
                  const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    absl::Status s = CheckDType(name, 0, in[0], accepts);
    if (!s.ok()) return s;
    auto fns = make(attrs, name);  // validates the attributes
    if (!fns.ok()) return fns.status();
    return std::vector<TensorDesc>{out == OutDType::kBool ? WithDType(in[0], DType::kBool) : in[0]};
  };
  def.reference = [name, make](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) -> absl::Status {
    auto fns = make(attrs, name);
    if (!fns.ok()) return fns.status();
    const DType t = in[0]->dtype;
    for (int64_t i = 0; i < in[0]->size(); ++i) {
      const double x = in[0]->data[i];
      outs[0].data[i] = fns->typed_reference ? fns->typed_reference(x, t) : fns->reference(x);
    }
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

void RegisterUnary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                   double (*reference)(double), Expr (*lang)(const Expr&)) {
  RegisterUnary(
      r, name, accepts, out,
      [reference, lang](const AttributeMap&, const std::string&) -> absl::StatusOr<Unary> {
        return Unary{reference, lang};
      });
}

OpDef BinaryOpDef(const std::string& name, DTypeClass accepts, OutDType out, bool same_dtype,
                  BinaryMaker make) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::kBroadcast;
  def.min_inputs = def.max_inputs = 2;
  def.compute = BinaryCompute(
      [name, make](const AttributeMap& attrs, const ir::Type& t) -> absl::StatusOr<BinaryScalar> {
        auto fns = make(attrs, name, DTypeOf(t));
        if (!fns.ok()) return fns.status();
        return fns->lang;
      });
  def.infer = [=](const std::vector<TensorDesc>& in,
                  const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    for (int i = 0; i < 2; ++i) {
      absl::Status s = CheckDType(name, i, in[i], accepts);
      if (!s.ok()) return s;
    }
    if (same_dtype) {
      absl::Status s = CheckSameDType(name, in);
      if (!s.ok()) return s;
    }
    auto fns = make(attrs, name, in[0].dtype);
    if (!fns.ok()) return fns.status();
    auto shape = BroadcastAll(name, in);
    if (!shape.ok()) return shape.status();
    return std::vector<TensorDesc>{
        TensorDesc{out == OutDType::kBool ? DType::kBool : in[0].dtype, *shape}};
  };
  def.reference = [name, make](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) -> absl::Status {
    auto fns = make(attrs, name, in[0]->dtype);
    if (!fns.ok()) return fns.status();
    HostTensor& o = outs[0];
    int64_t flat = 0;
    ForEachIndex(o.shape, [&](const std::vector<int64_t>& idx) {
      o.data[flat++] = fns->reference(in[0]->data[BroadcastIndex(in[0]->shape, idx)],
                                      in[1]->data[BroadcastIndex(in[1]->shape, idx)]);
    });
    return absl::OkStatus();
  };
  return def;
}

void RegisterBinary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                    bool same_dtype, BinaryMaker make) {
  r.Register(BinaryOpDef(name, accepts, out, same_dtype, std::move(make)));
}

void RegisterBinary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                    bool same_dtype, double (*reference)(double, double),
                    Expr (*lang)(const Expr&, const Expr&)) {
  RegisterBinary(
      r, name, accepts, out, same_dtype,
      [reference, lang](const AttributeMap&, const std::string&, DType) -> absl::StatusOr<Binary> {
        return Binary{reference, lang};
      });
}

}  // namespace cinn_like::hlir::ops
