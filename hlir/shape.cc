/// \file Shapes, broadcasting and axis normalization.
#include "hlir/shape.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"

namespace cinn_like::hlir {

std::string Dim::ToString() const { return is_symbolic() ? symbol : std::to_string(value); }

Dim Dim::FromExpr(const SymExpr& e) {
  return e.is_constant() ? Known(e.constant()) : Symbol(e.ToString());
}

absl::StatusOr<Dim> Dim::Parse(std::string_view text) {
  auto e = SymExpr::Parse(text);
  if (!e.ok()) return e.status();
  return FromExpr(*e);
}

SymExpr Dim::expr() const {
  if (!is_symbolic()) return SymExpr::Constant(value);
  if (IsSymbolName(symbol)) return SymExpr::Symbol(symbol);
  // Text that is no polynomial (a C++ caller's Dim::Symbol("n?")) is one opaque symbol.
  auto e = SymExpr::Parse(symbol);
  return e.ok() ? *e : SymExpr::Symbol(symbol);
}

std::optional<std::string> Dim::symbol_name() const {
  if (!is_symbolic()) return std::nullopt;
  if (IsSymbolName(symbol)) return symbol;
  return expr().AsSymbol();
}

Shape MakeShape(const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(Dim::Known(d));
  return s;
}

std::string ShapeToString(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) absl::StrAppend(&out, i ? ", " : "", s[i].ToString());
  return out + "]";
}

bool IsStatic(const Shape& s) {
  for (auto& d : s) {
    if (d.is_symbolic()) return false;
  }
  return true;
}

int64_t NumElements(const Shape& s) {
  int64_t n = 1;
  for (auto& d : s) {
    CHECK(!d.is_symbolic()) << "NumElements of symbolic shape " << ShapeToString(s);
    n *= d.value;
  }
  return n;
}

absl::Status CheckTensorSize(const TensorDesc& desc, const std::string& what) {
  int64_t n = 1;
  for (const Dim& d : desc.shape) {
    if (d.is_symbolic()) continue;
    if (d.value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", desc.ToString(), " has a negative dim"));
    }
    if (__builtin_mul_overflow(n, d.value, &n) || n > kMaxStaticElements) {
      return absl::OutOfRangeError(absl::StrCat(what, " ", desc.ToString(), " has more than ",
                                                kMaxStaticElements,
                                                " elements, the most cinn_like's 64-bit indexing "
                                                "addresses"));
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> StaticDims(const Shape& s) {
  std::vector<int64_t> out;
  for (auto& d : s) {
    CHECK(!d.is_symbolic()) << "StaticDims of symbolic shape " << ShapeToString(s);
    out.push_back(d.value);
  }
  return out;
}

SymExpr ElementCount(const Shape& s) {
  SymExpr n = SymExpr::Constant(1);
  for (const Dim& d : s) n = n * d.expr();
  return n;
}

absl::StatusOr<std::vector<int64_t>> EvaluateShape(const Shape& s,
                                                   const std::map<std::string, int64_t>& values) {
  std::vector<int64_t> out;
  for (const Dim& d : s) {
    if (!d.is_symbolic()) {
      out.push_back(d.value);
      continue;
    }
    auto v = d.expr().Evaluate(values);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align trailing dims: position i of the result reads a[i - (rank - a.size())].
    const Dim* da = i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
    const Dim* db = i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
    if (!da || da->is_one()) {
      out[i] = db ? *db : *da;
    } else if (!db || db->is_one() || *da == *db) {
      out[i] = *da;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "shapes ", ShapeToString(a), " and ", ShapeToString(b), " do not broadcast: dim ",
          da->ToString(), " against ", db->ToString(), " (sizes must match or one of them be 1)"));
    }
  }
  return out;
}

std::string TensorDesc::ToString() const { return DTypeName(dtype) + ShapeToString(shape); }

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, const std::string& op) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": axis ", axis,
                                                   " is out of range for a tensor of rank ", rank,
                                                   " (valid: ", -rank, " to ", rank - 1, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace cinn_like::hlir
