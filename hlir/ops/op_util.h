/// \file Helpers the op families share: dtype checks with clear messages, and reductions of
/// axis lists.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/attribute.h"
#include "hlir/shape.h"

namespace cinn_like::hlir::ops {

/// Which dtypes an op accepts.
enum class DTypeClass : uint8_t {
  kFloat,    // float16, bfloat16, float32, float64
  kNumeric,  // floats and integers
  kAny,      // numeric and bool
};
const char* DTypeClassName(DTypeClass c);
bool InClass(DType t, DTypeClass c);

/// Ok, or "op exp: input 0 (x: float32[4]) has dtype int32; exp supports float16, ...".
absl::Status CheckDType(const std::string& op, int input, const TensorDesc& desc, DTypeClass c);

/// Ok when every input has the dtype of input 0; else an error naming both and suggesting cast.
absl::Status CheckSameDType(const std::string& op, const std::vector<TensorDesc>& inputs);

/// The numpy broadcast of every input's shape; errors name the op.
absl::StatusOr<Shape> BroadcastAll(const std::string& op, const std::vector<TensorDesc>& inputs);

/// Normalized, sorted, unique axes from the attribute `name` (absent or empty: every axis).
absl::StatusOr<std::vector<int>> ReduceAxes(const std::string& op, const AttributeMap& attrs,
                                            const std::string& name, int rank);

/// The axes of a rank-`rank` input that `op` reduces over by its attribute "axis"
/// (normalized; `fallback` when absent, required where there is none): that axis alone, or with
/// `to_end` every axis from it to the last (layer_norm).
absl::StatusOr<std::vector<int>> AxisAttrAxes(const std::string& op, const AttributeMap& attrs,
                                              int rank, std::optional<int64_t> fallback,
                                              bool to_end = false);

/// Kernel sizes, strides, dilations and paddings fit int32 as dims do, so window arithmetic on
/// them (k * dilation, 2 * padding, sums with a dim) cannot overflow int64.
inline constexpr int64_t kMaxWindowAttr = (int64_t{1} << 31) - 1;

/// A 2-entry int list attribute of a windowed op (or `fallback` when absent); each entry must be
/// >= `min` and <= kMaxWindowAttr: an error naming the op, the attribute and its value.
absl::StatusOr<std::vector<int64_t>> WindowPair(const std::string& op, const AttributeMap& attrs,
                                                const std::string& name,
                                                std::vector<int64_t> fallback, int64_t min);

}  // namespace cinn_like::hlir::ops
