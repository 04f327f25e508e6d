/// \file Tensor shapes at the graph level, with symbolic dimensions, and broadcasting.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/dtype.h"
#include "hlir/sym_expr.h"

namespace cinn_like::hlir {

/// One dimension: a known size (>= 0), or a symbolic size known only when the compiled function
/// is called: a symbol ("n") or a polynomial of symbols ("s0*s1", "s0 - 1"), kept as its
/// canonical text (SymExpr::ToString). Two symbolic dims are equal when their texts are.
struct Dim {
  int64_t value = 0;
  std::string symbol;  // non-empty: symbolic, and `value` is unused

  static Dim Known(int64_t v) { return Dim{v, ""}; }
  /// `name` is a symbol name or a canonical text (callers with other text use Parse).
  static Dim Symbol(std::string name) { return Dim{-1, std::move(name)}; }
  /// A constant polynomial is a known dim.
  static Dim FromExpr(const SymExpr& e);
  /// "64", "s0", "s0*s1 + 1": the text's dim, the polynomial in canonical form.
  static absl::StatusOr<Dim> Parse(std::string_view text);
  /// The dim as a polynomial (a constant for a known dim).
  SymExpr expr() const;
  /// The symbol, where the dim is one symbol by itself (what a call can bind it from).
  std::optional<std::string> symbol_name() const;
  bool is_symbolic() const { return !symbol.empty(); }
  bool is_one() const { return !is_symbolic() && value == 1; }
  bool operator==(const Dim& o) const {
    return is_symbolic() ? symbol == o.symbol : (!o.is_symbolic() && value == o.value);
  }
  bool operator!=(const Dim& o) const { return !(*this == o); }
  /// "8", or the symbol's name.
  std::string ToString() const;
};

using Shape = std::vector<Dim>;

/// Known dims; convenient for tests and for concrete tensors.
Shape MakeShape(const std::vector<int64_t>& dims);
/// "[n, 64]"; "[]" for a scalar.
std::string ShapeToString(const Shape& s);
/// Whether every dim is known.
bool IsStatic(const Shape& s);
/// The element count of a static shape.
int64_t NumElements(const Shape& s);
/// The concrete sizes of a static shape (CHECK: static).
std::vector<int64_t> StaticDims(const Shape& s);
/// The product of the dims, as a polynomial.
SymExpr ElementCount(const Shape& s);
/// The shape with each symbolic dim evaluated with `values`; the error names the dim.
absl::StatusOr<std::vector<int64_t>> EvaluateShape(const Shape& s,
                                                   const std::map<std::string, int64_t>& values);

/// The most elements generated code indexes with 32-bit integers (flat indices, fused loops,
/// GPU thread ids): code for larger static tensors is lowered with 64-bit indices, and calls
/// binding symbolic dims past it are refused (symbolic shapes are lowered with 32-bit ones).
inline constexpr int64_t kMaxElements = 2147483647;
/// The most elements a tensor may have at all (64-bit indexing's bound,
/// ir::MaxIndexedElements(Int(64))).
inline constexpr int64_t kMaxStaticElements = int64_t{1} << 48;

/// The numpy broadcast of two shapes (trailing dims aligned; 1 stretches); the error names
/// both shapes and the first dims that disagree.
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);

/// A tensor's dtype and shape: what ops infer and the Program records per variable.
struct TensorDesc {
  DType dtype = DType::kFloat32;
  Shape shape;
  bool operator==(const TensorDesc& o) const { return dtype == o.dtype && shape == o.shape; }
  /// "float32[n, 64]"
  std::string ToString() const;
};

/// OK when every known dim of `desc` is >= 0 and the known dims' product is at most
/// kMaxStaticElements (symbolic dims are bound, and checked, at call time); the error names `what`
/// ("input x", "op pad: output 0") and `desc`.
absl::Status CheckTensorSize(const TensorDesc& desc, const std::string& what);

/// Normalizes an axis in [-rank, rank) to [0, rank); the error names the op and the rank.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, const std::string& op);

}  // namespace cinn_like::hlir
