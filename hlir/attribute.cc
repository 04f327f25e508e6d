/// \file Attribute printing (for people, and exact for keys) and typed reads.
#include "hlir/attribute.h"

#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cinn_like::hlir {
namespace {

template <typename T>
const char* KindOf() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  if constexpr (std::is_same_v<T, int64_t>) return "int";
  if constexpr (std::is_same_v<T, double>) return "float";
  if constexpr (std::is_same_v<T, std::string>) return "string";
  if constexpr (std::is_same_v<T, std::vector<int64_t>>) return "int list";
  if constexpr (std::is_same_v<T, std::vector<double>>) return "float list";
  if constexpr (std::is_same_v<T, Shape>) return "shape";
  return "?";
}

absl::Status Missing(const std::string& name, const std::string& op, const char* kind) {
  const char* article = kind[0] == 'i' ? "an " : "a ";
  return absl::InvalidArgumentError(
      absl::StrCat("op ", op, ": attribute '", name, "' is missing (", article, kind, ")"));
}

template <typename T>
absl::StatusOr<T> Read(const AttributeMap& attrs, const std::string& name, const std::string& op,
                       const T* default_value) {
  auto it = attrs.find(name);
  if (it == attrs.end()) {
    if (default_value) return *default_value;
    return Missing(name, op, KindOf<T>());
  }
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  if constexpr (std::is_same_v<T, double>) {
    if (const int64_t* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("op ", op, ": attribute '", name, "' is ", AttributeKindName(it->second), " ",
                   AttributeToString(it->second), ", expected ", KindOf<T>()));
}

}  // namespace

const char* AttributeKindName(const Attribute& a) {
  return std::visit([](const auto& v) { return KindOf<std::decay_t<decltype(v)>>(); }, a);
}

std::string AttributeToString(const Attribute& a) {
  struct Printer {
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return absl::StrCat(v); }
    std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
    std::string operator()(const std::vector<int64_t>& v) const {
      return "[" + absl::StrJoin(v, ", ") + "]";
    }
    std::string operator()(const std::vector<double>& v) const {
      return "[" + absl::StrJoin(v, ", ") + "]";
    }
    std::string operator()(const Shape& v) const { return ShapeToString(v); }
  };
  return std::visit(Printer{}, a);
}

namespace {

void AppendExact(std::string& key, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  absl::StrAppend(&key, "d", bits, ";");
}
template <typename T>
void AppendExact(std::string& key, const T& v) {
  if constexpr (std::is_same_v<T, std::vector<double>>) {
    for (double d : v) AppendExact(key, d);
  } else {
    absl::StrAppend(&key, AttributeToString(Attribute(v)), ";");
  }
}

}  // namespace

std::string ExactAttributes(const AttributeMap& attrs) {
  std::string key;
  for (const auto& [name, value] : attrs) {
    absl::StrAppend(&key, name, "=", value.index(), ":");
    std::visit([&](const auto& v) { AppendExact(key, v); }, value);
  }
  return key;
}

#define CINN_LIKE_DEFINE_GETTERS(Name, T)                                    \
  absl::StatusOr<T> Name(const AttributeMap& attrs, const std::string& name, \
                         const std::string& op) {                            \
    return Read<T>(attrs, name, op, nullptr);                                \
  }                                                                          \
  absl::StatusOr<T> Name(const AttributeMap& attrs, const std::string& name, \
                         const std::string& op, const T& default_value) {    \
    return Read<T>(attrs, name, op, &default_value);                         \
  }
CINN_LIKE_DEFINE_GETTERS(GetInt, int64_t)
CINN_LIKE_DEFINE_GETTERS(GetFloat, double)
CINN_LIKE_DEFINE_GETTERS(GetBool, bool)
CINN_LIKE_DEFINE_GETTERS(GetString, std::string)
CINN_LIKE_DEFINE_GETTERS(GetInts, std::vector<int64_t>)
#undef CINN_LIKE_DEFINE_GETTERS

absl::StatusOr<Shape> GetShape(const AttributeMap& attrs, const std::string& name,
                               const std::string& op) {
  auto it = attrs.find(name);
  if (it != attrs.end()) {
    if (const Shape* shape = std::get_if<Shape>(&it->second)) return *shape;
  }
  auto ints = GetInts(attrs, name, op);
  if (!ints.ok()) return ints.status();
  return MakeShape(*ints);
}

absl::StatusOr<AttributeMap> BindShapeAttributes(const AttributeMap& attrs,
                                                 const std::map<std::string, int64_t>& values,
                                                 const std::string& op) {
  AttributeMap out = attrs;
  for (auto& [name, value] : out) {
    const Shape* shape = std::get_if<Shape>(&value);
    if (!shape) continue;
    auto sizes = EvaluateShape(*shape, values);
    if (!sizes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("op ", op, ": attribute '", name, "' ",
                                                     ShapeToString(*shape), ": ",
                                                     sizes.status().message()));
    }
    value = *sizes;
  }
  return out;
}

}  // namespace cinn_like::hlir
