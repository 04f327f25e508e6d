/// \file DType names and the rounding the reference interpreter applies to each dtype.
#include "hlir/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/ir.h"

namespace cinn_like::hlir {
namespace {

constexpr DType kAll[] = {DType::kBool,    DType::kInt8,   DType::kInt16,   DType::kInt32,
                          DType::kInt64,   DType::kUInt8,  DType::kFloat16, DType::kBFloat16,
                          DType::kFloat32, DType::kFloat64};

/// Rounds a float32 to a narrower float with `mantissa` explicit bits and exponent range of
/// `max_exp` (the largest unbiased exponent) and `min_normal_exp`, ties to even; subnormals
/// are kept at the format's smallest spacing.
double RoundToFloatFormat(double v, int mantissa, int max_exp, int min_normal_exp) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  double a = std::fabs(v);
  int e = std::ilogb(a);
  if (e < min_normal_exp) e = min_normal_exp;  // subnormal spacing
  double quantum = std::ldexp(1.0, e - mantissa);
  double r = std::nearbyint(a / quantum) * quantum;  // default rounding mode: ties to even
  double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mantissa), max_exp);
  if (r > max_finite) r = std::numeric_limits<double>::infinity();
  return std::copysign(r, v);
}

template <typename T>
double WrapInteger(double v) {
  if (!std::isfinite(v)) return 0;  // no integer value: 0, documented in RoundToDType
  double t = std::trunc(v);
  // Wrap modulo 2^bits as a C cast from a wide integer would (not constexpr: only gcc's ldexp is).
  const double range = std::ldexp(1.0, 8 * sizeof(T));
  double m = std::fmod(t, range);  // exact, of v's sign
  if (!std::is_signed_v<T>) return m < 0 ? m + range : m;
  if (m >= range / 2) m -= range;
  if (m < -range / 2) m += range;
  return m;
}

}  // namespace

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kBool:
      return "bool";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt8:
      return "uint8";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
  }
  return "?";
}

absl::StatusOr<DType> ParseDType(const std::string& name) {
  std::string names;
  for (DType t : kAll) {
    if (name == DTypeName(t)) return t;
    absl::StrAppend(&names, names.empty() ? "" : ", ", DTypeName(t));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "'; the dtypes are ", names));
}

bool IsFloat(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}

bool IsInteger(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 ||
         t == DType::kUInt8;
}

int DTypeBits(DType t) {
  switch (t) {
    case DType::kBool:
      return 8;
    case DType::kInt8:
    case DType::kUInt8:
      return 8;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 16;
    case DType::kInt32:
    case DType::kFloat32:
      return 32;
    case DType::kInt64:
    case DType::kFloat64:
      return 64;
  }
  return 0;
}

absl::Status CheckScalarFits(const std::string& op, const std::string& what, double v, DType t) {
  bool fits = true;
  if (IsInteger(t)) {
    const int bits = DTypeBits(t);
    const double lo = t == DType::kUInt8 ? 0 : -std::ldexp(1.0, bits - 1);
    const double hi = t == DType::kUInt8 ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
    fits = std::isfinite(v) && std::trunc(v) >= lo && std::trunc(v) < hi;
  } else if (IsFloat(t)) {
    fits = !std::isfinite(v) || std::isfinite(RoundToDType(v, t));
  }
  if (fits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("op ", op, ": ", what, " ", v,
                                                 " cannot be converted to ", DTypeName(t),
                                                 " without overflow"));
}

double RoundToDType(double v, DType t) {
  switch (t) {
    case DType::kBool:
      return v != 0 ? 1.0 : 0.0;  // NaN is true, as in C
    case DType::kInt8:
      return WrapInteger<int8_t>(v);
    case DType::kInt16:
      return WrapInteger<int16_t>(v);
    case DType::kInt32:
      return WrapInteger<int32_t>(v);
    case DType::kInt64:  // doubles hold int64 exactly up to 2^53: the documented limit
      return static_cast<double>(ir::WrapToInt64(v));
    case DType::kUInt8:
      return WrapInteger<uint8_t>(v);
    case DType::kFloat16:
      return RoundToFloatFormat(v, 10, 15, -14);
    case DType::kBFloat16:
      return RoundToFloatFormat(v, 7, 127, -126);
    case DType::kFloat32:
      return static_cast<double>(static_cast<float>(v));
    case DType::kFloat64:
      return v;
  }
  return v;
}

}  // namespace cinn_like::hlir
