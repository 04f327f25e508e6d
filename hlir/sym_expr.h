/// \file Symbolic sizes: polynomials with integer coefficients over size symbols ("s0",
/// "s0*s1", "2*s0 - 1"), the sizes a framework's dynamic shapes give (a view of [s0, s1, 64]
/// as [s0*s1, 64]). Each polynomial has one canonical text, so two dims are equal exactly when
/// their texts are (hlir::Dim keeps the text).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cinn_like::hlir {

class SymExpr {
 public:
  /// The symbols of one term, sorted, a symbol repeated for each power ({"s0", "s0"}: s0²).
  using Monomial = std::vector<std::string>;

  SymExpr() = default;  // 0
  static SymExpr Constant(int64_t c);
  static SymExpr Symbol(const std::string& name);
  /// Integers, symbol names ([A-Za-z_][A-Za-z0-9_]*), + - * and parentheses: "s0*s1",
  /// "2*(s0 + 1)". The error names the text and what is wrong.
  static absl::StatusOr<SymExpr> Parse(std::string_view text);

  bool is_constant() const;
  /// The constant term.
  int64_t constant() const;
  /// The name, when the polynomial is one symbol (coefficient 1, power 1).
  std::optional<std::string> AsSymbol() const;
  std::set<std::string> Symbols() const;
  /// The canonical text: terms by falling degree, then by name; the constant last
  /// ("s0*s1 + 2*s0 - 1"; "0" for zero).
  std::string ToString() const;
  /// The value with `values` for the symbols; an unbound symbol or an int64 overflow is an error.
  absl::StatusOr<int64_t> Evaluate(const std::map<std::string, int64_t>& values) const;
  /// this / divisor when the divisor is one term (a coefficient times symbols) dividing each of
  /// this polynomial's terms exactly; nullopt otherwise (also for a zero divisor).
  std::optional<SymExpr> DivideExactly(const SymExpr& divisor) const;

  const std::map<Monomial, int64_t>& terms() const { return terms_; }
  /// Whether arithmetic made a coefficient past int64 (sizes never do; a fuzzer's might): such
  /// a polynomial prints as "?overflow", which no parse accepts, and does not evaluate.
  bool overflowed() const { return overflowed_; }

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  bool operator==(const SymExpr& o) const { return terms_ == o.terms_; }

 private:
  void Add(const Monomial& m, int64_t coefficient);

  std::map<Monomial, int64_t> terms_;  // no zero coefficient
  bool overflowed_ = false;
};

/// Whether `name` is a symbol name ([A-Za-z_][A-Za-z0-9_]*).
bool IsSymbolName(std::string_view name);

}  // namespace cinn_like::hlir
