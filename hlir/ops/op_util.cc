/// \file Shared checks of the op families.
#include "hlir/ops/op_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cinn_like::hlir::ops {

const char* DTypeClassName(DTypeClass c) {
  switch (c) {
    case DTypeClass::kFloat:
      return "float16, bfloat16, float32 and float64";
    case DTypeClass::kNumeric:
      return "floating-point and integer dtypes";
    case DTypeClass::kAny:
      return "every dtype";
  }
  return "?";
}

bool InClass(DType t, DTypeClass c) {
  switch (c) {
    case DTypeClass::kFloat:
      return IsFloat(t);
    case DTypeClass::kNumeric:
      return IsFloat(t) || IsInteger(t);
    case DTypeClass::kAny:
      return true;
  }
  return false;
}

absl::Status CheckDType(const std::string& op, int input, const TensorDesc& desc, DTypeClass c) {
  if (InClass(desc.dtype, c)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("op ", op, ": input ", input, " (", desc.ToString(), ") has dtype ",
                   DTypeName(desc.dtype), "; ", op, " supports ", DTypeClassName(c)));
}

absl::Status CheckSameDType(const std::string& op, const std::vector<TensorDesc>& inputs) {
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].dtype != inputs[0].dtype) {
      return absl::InvalidArgumentError(absl::StrCat("op ", op, ": input 0 (", inputs[0].ToString(),
                                                     ") and input ", i, " (", inputs[i].ToString(),
                                                     ") have different dtypes; insert a cast"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> BroadcastAll(const std::string& op, const std::vector<TensorDesc>& inputs) {
  Shape out = inputs.empty() ? Shape{} : inputs[0].shape;
  for (size_t i = 1; i < inputs.size(); ++i) {
    auto b = BroadcastShapes(out, inputs[i].shape);
    if (!b.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op ", op, ": input ", i, " (", inputs[i].ToString(), "): ", b.status().message()));
    }
    out = *b;
  }
  return out;
}

absl::StatusOr<std::vector<int>> ReduceAxes(const std::string& op, const AttributeMap& attrs,
                                            const std::string& name, int rank) {
  auto axes = GetInts(attrs, name, op, std::vector<int64_t>{});
  if (!axes.ok()) return axes.status();
  std::vector<int> out;
  if (axes->empty()) {
    for (int d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (int64_t a : *axes) {
    auto n = NormalizeAxis(a, rank, op);
    if (!n.ok()) return n.status();
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": attribute '", name, "' names an axis twice"));
  }
  return out;
}

absl::StatusOr<std::vector<int>> AxisAttrAxes(const std::string& op, const AttributeMap& attrs,
                                              int rank, std::optional<int64_t> fallback,
                                              bool to_end) {
  auto axis = fallback ? GetInt(attrs, "axis", op, *fallback) : GetInt(attrs, "axis", op);
  if (!axis.ok()) return axis.status();
  auto a = NormalizeAxis(*axis, rank, op);
  if (!a.ok()) return a.status();
  std::vector<int> axes{*a};
  for (int d = *a + 1; to_end && d < rank; ++d) axes.push_back(d);
  return axes;
}

absl::StatusOr<std::vector<int64_t>> WindowPair(const std::string& op, const AttributeMap& attrs,
                                                const std::string& name,
                                                std::vector<int64_t> fallback, int64_t min) {
  auto v = fallback.empty() ? GetInts(attrs, name, op) : GetInts(attrs, name, op, fallback);
  if (!v.ok()) return v.status();
  if (v->size() != 2 || (*v)[0] < min || (*v)[1] < min || (*v)[0] > kMaxWindowAttr ||
      (*v)[1] > kMaxWindowAttr) {
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": attribute '", name, "' is [", absl::StrJoin(*v, ", "),
                     "], expected 2 entries ", min, " to ", kMaxWindowAttr));
  }
  return v;
}

}  // namespace cinn_like::hlir::ops
