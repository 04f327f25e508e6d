/// \file Symbolic sizes: parsing, canonical text, arithmetic, evaluation and exact division.
#include "hlir/sym_expr.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"

namespace cinn_like::hlir {
namespace {

/// Recursive descent over expr := term (('+'|'-') term)*; term := factor ('*' factor)*;
/// factor := integer | name | '(' expr ')' | '-' factor.
class Parser {
 public:
  static constexpr size_t kMaxTerms = 1024;

  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<SymExpr> Whole() {
    auto e = Expr();
    if (!e.ok()) return e;
    Skip();
    if (pos_ != text_.size()) return Error("unexpected '" + std::string(1, text_[pos_]) + "'");
    if (e->overflowed()) return Error("a coefficient past int64");
    return e;
  }

 private:
  absl::StatusOr<SymExpr> Expr() {
    auto e = Term();
    if (!e.ok()) return e;
    SymExpr sum = *e;
    while (Peek() == '+' || Peek() == '-') {
      char op = text_[pos_++];
      auto t = Term();
      if (!t.ok()) return t;
      sum = op == '+' ? sum + *t : sum - *t;
    }
    return sum;
  }

  absl::StatusOr<SymExpr> Term() {
    auto f = Factor();
    if (!f.ok()) return f;
    SymExpr product = *f;
    while (Peek() == '*') {
      ++pos_;
      auto g = Factor();
      if (!g.ok()) return g;
      product = product * *g;
      // (a0 + b0)*(a1 + b1)*... doubles the terms with each factor.
      if (product.terms().size() > kMaxTerms) return Error("more than 1024 terms");
    }
    return product;
  }

  absl::StatusOr<SymExpr> Factor() {
    char c = Peek();
    if (c == '(') {
      auto e = Nested(&Parser::Expr);
      if (!e.ok()) return e;
      if (Peek() != ')') return Error("a '(' is not closed");
      ++pos_;
      return e;
    }
    if (c == '-') {
      auto f = Nested(&Parser::Factor);
      if (!f.ok()) return f;
      return SymExpr::Constant(0) - *f;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v))
          return Error("an integer past int64");
        ++pos_;
      }
      return SymExpr::Constant(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      return SymExpr::Symbol(std::string(text_.substr(start, pos_ - start)));
    }
    return Error(pos_ == text_.size() ? "it ends where a size or a symbol is expected"
                                      : "unexpected '" + std::string(1, c) + "'");
  }

  /// Past the current character, `part` one level deeper (at most 64: no unbounded recursion).
  absl::StatusOr<SymExpr> Nested(absl::StatusOr<SymExpr> (Parser::*part)()) {
    ++pos_;
    if (++depth_ > 64) return Error("parentheses or signs nested more than 64 deep");
    auto e = (this->*part)();
    --depth_;
    return e;
  }

  char Peek() {
    Skip();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("symbolic size \"", std::string(text_),
                                                   "\": ", what, " (at character ", pos_, ")"));
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

/// Falling degree, then the names: the order of the canonical text.
bool CanonicalBefore(const SymExpr::Monomial& a, const SymExpr::Monomial& b) {
  if (a.size() != b.size()) return a.size() > b.size();
  return a < b;
}

}  // namespace

bool IsSymbolName(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

SymExpr SymExpr::Constant(int64_t c) {
  SymExpr e;
  e.Add({}, c);
  return e;
}

SymExpr SymExpr::Symbol(const std::string& name) {
  SymExpr e;
  e.Add({name}, 1);
  return e;
}

absl::StatusOr<SymExpr> SymExpr::Parse(std::string_view text) { return Parser(text).Whole(); }

void SymExpr::Add(const Monomial& m, int64_t coefficient) {
  int64_t& c = terms_[m];
  if (__builtin_add_overflow(c, coefficient, &c)) overflowed_ = true;
  if (c == 0) terms_.erase(m);
}

bool SymExpr::is_constant() const {
  return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty());
}

int64_t SymExpr::constant() const {
  auto it = terms_.find(Monomial{});
  return it == terms_.end() ? 0 : it->second;
}

std::optional<std::string> SymExpr::AsSymbol() const {
  if (terms_.size() != 1 || terms_.begin()->second != 1 || terms_.begin()->first.size() != 1)
    return std::nullopt;
  return terms_.begin()->first[0];
}

std::set<std::string> SymExpr::Symbols() const {
  std::set<std::string> out;
  for (const auto& [m, c] : terms_) out.insert(m.begin(), m.end());
  return out;
}

std::string SymExpr::ToString() const {
  if (overflowed_) return "?overflow";
  if (terms_.empty()) return "0";
  std::vector<std::pair<Monomial, int64_t>> sorted(terms_.begin(), terms_.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return CanonicalBefore(a.first, b.first); });
  std::string out;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& [m, c] = sorted[i];
    // The magnitude as unsigned: -INT64_MIN does not fit.
    uint64_t magnitude = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    if (i == 0) {
      if (c < 0) out += "-";
    } else {
      out += c < 0 ? " - " : " + ";
    }
    std::string names;
    for (const std::string& s : m) absl::StrAppend(&names, names.empty() ? "" : "*", s);
    if (m.empty()) {
      absl::StrAppend(&out, magnitude);
    } else if (magnitude == 1) {
      out += names;
    } else {
      absl::StrAppend(&out, magnitude, "*", names);
    }
  }
  return out;
}

absl::StatusOr<int64_t> SymExpr::Evaluate(const std::map<std::string, int64_t>& values) const {
  if (overflowed_) return absl::OutOfRangeError("symbolic size with a coefficient past int64");
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t term = c;
    for (const std::string& s : m) {
      auto it = values.find(s);
      if (it == values.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("symbolic size ", ToString(), ": symbol ", s, " is not bound"));
      }
      if (__builtin_mul_overflow(term, it->second, &term)) {
        return absl::OutOfRangeError(
            absl::StrCat("symbolic size ", ToString(), " overflows int64"));
      }
    }
    if (__builtin_add_overflow(sum, term, &sum)) {
      return absl::OutOfRangeError(absl::StrCat("symbolic size ", ToString(), " overflows int64"));
    }
  }
  return sum;
}

std::optional<SymExpr> SymExpr::DivideExactly(const SymExpr& divisor) const {
  if (overflowed_ || divisor.overflowed_ || divisor.terms_.size() != 1) return std::nullopt;
  const auto& [dm, dc] = *divisor.terms_.begin();
  SymExpr out;
  for (const auto& [m, c] : terms_) {
    if ((c == INT64_MIN && dc == -1) || c % dc != 0) return std::nullopt;
    // m minus dm as multisets (both sorted).
    Monomial rest;
    size_t j = 0;
    for (const std::string& s : m) {
      if (j < dm.size() && dm[j] == s) {
        ++j;
      } else {
        rest.push_back(s);
      }
    }
    if (j != dm.size()) return std::nullopt;
    out.Add(rest, c / dc);
  }
  return out;
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  SymExpr out = a;
  out.overflowed_ = a.overflowed_ || b.overflowed_;
  for (const auto& [m, c] : b.terms_) out.Add(m, c);
  return out;
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  SymExpr out = a;
  out.overflowed_ = a.overflowed_ || b.overflowed_;
  for (const auto& [m, c] : b.terms_) {
    int64_t neg;
    if (__builtin_sub_overflow(int64_t{0}, c, &neg)) out.overflowed_ = true;
    out.Add(m, neg);
  }
  return out;
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  SymExpr out;
  out.overflowed_ = a.overflowed_ || b.overflowed_;
  for (const auto& [ma, ca] : a.terms_) {
    for (const auto& [mb, cb] : b.terms_) {
      SymExpr::Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      int64_t c;
      if (__builtin_mul_overflow(ca, cb, &c)) out.overflowed_ = true;
      out.Add(m, c);
    }
  }
  return out;
}

}  // namespace cinn_like::hlir
