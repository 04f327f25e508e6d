/// \file The constant op: a tensor whose values the graph holds (what constant folding
/// produces). No inputs; attributes "values" (float list, row-major, already rounded to the
/// dtype), "shape" (int list) and "dtype" (default float32). Integer values above 2^53 lose
/// precision in the float list. Its pattern is opaque: the graph compiler materializes it as
/// data, never as a kernel. It has no compute: an ir::Compute holding the values as a chain
/// of selects would be a poor kernel for more than a few elements, so op lowering must copy
/// the values into a buffer instead.
#include "absl/strings/str_cat.h"
#include "hlir/op.h"

namespace cinn_like::hlir {
namespace {

absl::StatusOr<std::vector<TensorDesc>> InferConstant(const std::vector<TensorDesc>&,
                                                      const AttributeMap& attrs) {
  auto shape = GetInts(attrs, "shape", "constant");
  if (!shape.ok()) return shape.status();
  auto dtype = GetString(attrs, "dtype", "constant", "float32");
  if (!dtype.ok()) return dtype.status();
  auto t = ParseDType(*dtype);
  if (!t.ok())
    return absl::InvalidArgumentError("op constant: " + std::string(t.status().message()));
  auto it = attrs.find("values");
  if (it == attrs.end() || !std::holds_alternative<std::vector<double>>(it->second)) {
    return absl::InvalidArgumentError("op constant: attribute 'values' is missing (a float list)");
  }
  int64_t count = 1;
  for (int64_t d : *shape) {
    if (d < 0) return absl::InvalidArgumentError("op constant: shape sizes must be >= 0");
    count *= d;
  }
  size_t n = std::get<std::vector<double>>(it->second).size();
  if (static_cast<int64_t>(n) != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("op constant: attribute 'values' holds ", n, " values, shape ",
                     ShapeToString(MakeShape(*shape)), " needs ", count));
  }
  return std::vector<TensorDesc>{TensorDesc{*t, MakeShape(*shape)}};
}

absl::Status ReferenceConstant(const std::vector<const HostTensor*>&, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) {
  outs[0].data = std::get<std::vector<double>>(attrs.at("values"));
  return absl::OkStatus();
}

}  // namespace

void RegisterConstantOps(OpRegistry& r) {
  r.Register(OpDef{"constant", OpPattern::kOpaque, 0, 0, 1, InferConstant, ReferenceConstant});
}

}  // namespace cinn_like::hlir
