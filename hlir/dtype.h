/// \file Element types at the graph level: the dtypes a Program's tensors and ops use.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cinn_like::hlir {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

/// "float32", "bfloat16", "bool", ... (the names the JSON form and messages use).
const char* DTypeName(DType t);
/// The dtype named `name`; InvalidArgument listing the names otherwise.
absl::StatusOr<DType> ParseDType(const std::string& name);

bool IsFloat(DType t);
/// Signed or unsigned integers (not bool).
bool IsInteger(DType t);
int DTypeBits(DType t);

/// `v` as the dtype stores it: floats rounded to nearest even at their precision (float16 and
/// bfloat16 included, with overflow to infinity), integers truncated toward zero and wrapped,
/// bool as 0 or 1; NaN and infinities become 0 in integer dtypes. The reference interpreter keeps
/// every value as a double rounded by this.
double RoundToDType(double v, DType t);

/// Whether a scalar `v` given for a tensor of dtype `t` (a fill or pad value) converts without
/// overflow, as PyTorch requires of torch.full: an integer dtype takes finite values whose
/// truncation is in its range; a float dtype takes +-inf, NaN and finite values that stay finite;
/// bool takes any. Returns InvalidArgument naming `op` and `what` otherwise.
absl::Status CheckScalarFits(const std::string& op, const std::string& what, double v, DType t);

}  // namespace cinn_like::hlir
