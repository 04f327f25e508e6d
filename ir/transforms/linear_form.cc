/// \file Affine forms and bounds over loop ranges.
#include "ir/transforms/linear_form.h"

#include "ir/substitute.h"
#include "ir/transforms/simplify.h"

namespace cinn_like::ir {
namespace {

const BinaryNode* AsBinary(const Expr& e) {
  switch (e.kind()) {
#define CINN_LIKE_BINARY_CASE(name, sym) case IrNodeKind::k##name:
    CINN_LIKE_BINARY_NODES(CINN_LIKE_BINARY_CASE)
#undef CINN_LIKE_BINARY_CASE
    return static_cast<const BinaryNode*>(e.get());
    default:
      return nullptr;
  }
}

}  // namespace

LinearForm LinearForm::Of(const Expr& e) {
  LinearForm f;
  if (auto* c = AsConstInt(e)) {
    f.constant = *c;
    return f;
  }
  if (auto* op = e.As<ir::Add>()) {
    f = Of(op->a);
    f.Add(Of(op->b));
    return f;
  }
  if (auto* op = e.As<Sub>()) {
    f = Of(op->a);
    f.Add(Of(op->b), -1);
    return f;
  }
  if (auto* op = e.As<Mul>()) {
    const int64_t* ca = AsConstInt(op->a);
    const int64_t* cb = AsConstInt(op->b);
    if (ca || cb) {
      f.Add(Of(ca ? op->b : op->a), ca ? *ca : *cb);
      return f;
    }
  }
  f.terms.push_back({e, 1});
  return f;
}

void LinearForm::Add(const LinearForm& other, int64_t scale) {
  constant += scale * other.constant;
  for (auto& [atom, coeff] : other.terms) {
    bool merged = false;
    for (auto it = terms.begin(); it != terms.end(); ++it) {
      if (!StructuralEqual(it->first, atom)) continue;
      it->second += scale * coeff;
      if (it->second == 0) terms.erase(it);
      merged = true;
      break;
    }
    if (!merged && scale * coeff != 0) terms.push_back({atom, scale * coeff});
  }
}

int64_t LinearForm::Coeff(const Variable* v) const {
  for (auto& [atom, coeff] : terms) {
    if (atom.get() == v) return coeff;
  }
  return 0;
}

LinearForm LinearForm::Without(const Variable* v) const {
  LinearForm f = *this;
  for (auto it = f.terms.begin(); it != f.terms.end(); ++it) {
    if (it->first.get() == v) {
      f.terms.erase(it);
      break;
    }
  }
  return f;
}

bool LinearForm::UsesInsideAtom(const Variable* v) const {
  for (auto& [atom, coeff] : terms) {
    if (atom.get() != v && UsesVar(atom, v)) return true;
  }
  return false;
}

Expr LinearForm::ToExpr(Type t) const {
  Expr sum;
  for (auto& [atom, coeff] : terms) {
    Expr term = coeff == 1 ? atom : atom * MakeConst(t, static_cast<double>(coeff));
    sum = sum.defined() ? sum + term : term;
  }
  if (!sum.defined()) return MakeConst(t, static_cast<double>(constant));
  if (constant != 0) sum = sum + MakeConst(t, static_cast<double>(constant));
  return sum;
}

LinearForm UpperBound(LinearForm form, const RangeMap& ranges) {
  // Each round replaces one ranged variable; ranges nest as loops do, so this ends.
  for (int round = 0; round < 256; ++round) {
    bool replaced = false;
    for (size_t k = 0; k < form.terms.size(); ++k) {
      auto* v = form.terms[k].first.As<Variable>();
      auto it = v ? ranges.find(v) : ranges.end();
      if (it == ranges.end()) continue;
      int64_t coeff = form.terms[k].second;
      form.terms.erase(form.terms.begin() + static_cast<std::ptrdiff_t>(k));
      form.Add(LinearForm::Of(coeff > 0 ? it->second.max : it->second.min), coeff);
      replaced = true;
      break;
    }
    if (!replaced) break;
  }
  return form;
}

bool ProvablyNonNegative(const Expr& e, const RangeMap& ranges) {
  if (!e.type().is_integer() || !e.type().is_scalar()) return false;
  if (auto* c = AsConstInt(e)) return *c >= 0;
  if (auto* v = e.As<Variable>()) {
    auto it = ranges.find(v);
    return it == ranges.end() || ProvablyNonNegative(it->second.min, ranges);
  }
  auto* op = AsBinary(e);
  if (!op) return false;
  switch (e.kind()) {
    case IrNodeKind::kAdd:
    case IrNodeKind::kMul:
    case IrNodeKind::kDiv:
    case IrNodeKind::kMod:
    case IrNodeKind::kMin:
    case IrNodeKind::kMax:
      return ProvablyNonNegative(op->a, ranges) && ProvablyNonNegative(op->b, ranges);
    default:
      return false;
  }
}

bool ProvablyNonPositive(const LinearForm& form, const RangeMap& ranges) {
  LinearForm ub = UpperBound(form, ranges);
  if (ub.constant > 0) return false;
  for (auto& [atom, coeff] : ub.terms) {
    if (coeff > 0 || !ProvablyNonNegative(atom, ranges)) return false;
  }
  return true;
}

std::optional<LinearForm> AsNonPositiveClaim(const Expr& cond) {
  auto* op = AsBinary(cond);
  if (!op || !op->a.type().is_integer() || !op->a.type().is_scalar()) return std::nullopt;
  LinearForm f;
  switch (cond.kind()) {
    case IrNodeKind::kLT:  // a - b + 1 <= 0
      f = LinearForm::Of(op->a);
      f.Add(LinearForm::Of(op->b), -1);
      f.constant += 1;
      return f;
    case IrNodeKind::kLE:
      f = LinearForm::Of(op->a);
      f.Add(LinearForm::Of(op->b), -1);
      return f;
    case IrNodeKind::kGT:
      f = LinearForm::Of(op->b);
      f.Add(LinearForm::Of(op->a), -1);
      f.constant += 1;
      return f;
    case IrNodeKind::kGE:
      f = LinearForm::Of(op->b);
      f.Add(LinearForm::Of(op->a), -1);
      return f;
    default:
      return std::nullopt;
  }
}

std::vector<Expr> SplitConjunction(const Expr& cond) {
  if (auto* op = cond.As<And>(); op && cond.type().is_scalar()) {
    std::vector<Expr> out = SplitConjunction(op->a);
    for (auto& e : SplitConjunction(op->b)) out.push_back(e);
    return out;
  }
  return {cond};
}

Expr HoldsForEveryValue(const Expr& guard, const Variable* v, const Expr& min, int64_t count) {
  std::vector<Expr> out;
  for (const Expr& c : SplitConjunction(guard)) {
    if (!UsesVar(c, v)) {
      out.push_back(c);
      continue;
    }
    // The claim form <= 0 is tightest where form is largest.
    auto claim = AsNonPositiveClaim(c);
    if (!claim || claim->UsesInsideAtom(v)) return Expr();
    const int64_t end = claim->Coeff(v) > 0 ? count - 1 : 0;
    out.push_back(Substitute(c, {{v, Simplify(min + IndexConst(end))}}));
  }
  return JoinConjunction(out);
}

Expr JoinConjunction(const std::vector<Expr>& conds) {
  if (conds.empty()) return IntImm::Make(Bool(), 1);
  Expr out = conds[0];
  for (size_t i = 1; i < conds.size(); ++i) out = out && conds[i];
  return out;
}

}  // namespace cinn_like::ir
