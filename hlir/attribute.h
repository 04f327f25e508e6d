/// \file Op attributes: typed values by name, and accessors whose errors name the op.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/shape.h"

namespace cinn_like::hlir {

/// One attribute value. Integers are int64, reals double; lists keep their element kind. A
/// shape (sizes and symbolic sizes: a reshape's target under dynamic shapes) is its own kind.
using Attribute = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, Shape>;
/// Ordered by name, so printing and JSON are deterministic.
using AttributeMap = std::map<std::string, Attribute>;

/// "bool", "int", "float", "string", "int list", "float list", "shape".
const char* AttributeKindName(const Attribute& a);
/// `3`, `true`, `"tanh"`, `[0, 1]`.
std::string AttributeToString(const Attribute& a);
/// The attributes as exact text for keys: reals by their bits, so that NaN, 0 and -0 are three
/// values (the attribute map's own < on doubles made a NaN fill equal to a 0 fill), and values
/// that print alike (1e-05, 1.0000001e-05) two.
std::string ExactAttributes(const AttributeMap& attrs);

/// Typed reads. A missing required attribute or a value of another kind is InvalidArgument
/// naming the op and the attribute ("op softmax: attribute 'axis' is missing (an int)").
/// An int is accepted where a float is asked for.
absl::StatusOr<int64_t> GetInt(const AttributeMap& attrs, const std::string& name,
                               const std::string& op);
absl::StatusOr<double> GetFloat(const AttributeMap& attrs, const std::string& name,
                                const std::string& op);
absl::StatusOr<bool> GetBool(const AttributeMap& attrs, const std::string& name,
                             const std::string& op);
absl::StatusOr<std::string> GetString(const AttributeMap& attrs, const std::string& name,
                                      const std::string& op);
absl::StatusOr<std::vector<int64_t>> GetInts(const AttributeMap& attrs, const std::string& name,
                                             const std::string& op);

/// The same reads with a default when the attribute is absent (a wrong kind is still an error).
absl::StatusOr<int64_t> GetInt(const AttributeMap& attrs, const std::string& name,
                               const std::string& op, const int64_t& default_value);
absl::StatusOr<double> GetFloat(const AttributeMap& attrs, const std::string& name,
                                const std::string& op, const double& default_value);
absl::StatusOr<bool> GetBool(const AttributeMap& attrs, const std::string& name,
                             const std::string& op, const bool& default_value);
absl::StatusOr<std::string> GetString(const AttributeMap& attrs, const std::string& name,
                                      const std::string& op, const std::string& default_value);
absl::StatusOr<std::vector<int64_t>> GetInts(const AttributeMap& attrs, const std::string& name,
                                             const std::string& op,
                                             const std::vector<int64_t>& default_value);

/// A shape attribute: an int list (static sizes) or a shape (symbolic sizes too).
absl::StatusOr<Shape> GetShape(const AttributeMap& attrs, const std::string& name,
                               const std::string& op);
/// `attrs` with each shape attribute's symbolic sizes evaluated with `values` (an int list
/// then); the error names the op and the attribute.
absl::StatusOr<AttributeMap> BindShapeAttributes(const AttributeMap& attrs,
                                                 const std::map<std::string, int64_t>& values,
                                                 const std::string& op);

}  // namespace cinn_like::hlir
