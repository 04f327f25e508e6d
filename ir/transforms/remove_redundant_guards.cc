/// \file RemoveRedundantGuards: affine bounds from enclosing loops and conditions.
#include "ir/transforms/remove_redundant_guards.h"

#include "ir/mutator.h"
#include "ir/transforms/linear_form.h"

namespace cinn_like::ir {
namespace {

class GuardRemover : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    const Variable* v = op->loop_var.node();
    ranges_[v] = {op->min, op->min + op->extent - 1};
    Stmt body = Mutate(op->body);
    ranges_.erase(v);
    if (body.same_as(op->body)) return self;
    return For::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->bind_axis);
  }

  Stmt MutateLetStmt(const LetStmt* op, const Stmt& self) override {
    ranges_[op->var.node()] = {op->value, op->value};  // not a symbolic (>= 0) dimension
    Stmt s = IRMutator::MutateLetStmt(op, self);
    ranges_.erase(op->var.node());
    return s;
  }

  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    std::vector<Expr> kept = SplitConjunction(op->cond);
    bool dropped = false;
    // A conjunct may also be implied by its siblings; one dropped no longer justifies others.
    for (size_t k = 0; k < kept.size() && !op->else_case.defined();) {
      std::vector<Expr> siblings = kept;
      siblings.erase(siblings.begin() + static_cast<std::ptrdiff_t>(k));
      if (Implied(kept[k], siblings)) {
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(k));
        dropped = true;
      } else {
        ++k;
      }
    }
    // The conditions hold inside the then branch.
    size_t saved = facts_.size(), saved_exprs = known_exprs_.size();
    for (const Expr& c : kept) {
      if (auto claim = AsNonPositiveClaim(c)) {
        facts_.push_back(*claim);
      } else {
        known_exprs_.push_back(c);
      }
    }
    Stmt then_case = Mutate(op->then_case);
    facts_.resize(saved);
    known_exprs_.resize(saved_exprs);
    Stmt else_case = Mutate(op->else_case);
    if (kept.empty()) return then_case;
    if (!dropped && then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) {
      return self;
    }
    return IfThenElse::Make(dropped ? JoinConjunction(kept) : op->cond, then_case, else_case);
  }

 private:
  /// Whether `c` holds given the loop ranges, the enclosing conditions and `siblings`.
  bool Implied(const Expr& c, const std::vector<Expr>& siblings) {
    auto claim = AsNonPositiveClaim(c);
    if (!claim) {
      for (const Expr& known : known_exprs_) {
        if (StructuralEqual(known, c)) return true;
      }
      for (const Expr& known : siblings) {
        if (StructuralEqual(known, c)) return true;
      }
      return false;
    }
    std::vector<LinearForm> facts = facts_;
    for (const Expr& s : siblings) {
      if (auto f = AsNonPositiveClaim(s)) facts.push_back(*f);
    }
    for (const LinearForm& form : Equivalents(*claim)) {
      if (ProvablyNonPositive(form, ranges_)) return true;
      // form = fact + (form - fact) <= 0 when fact <= 0 and form - fact <= 0.
      for (const LinearForm& fact : facts) {
        LinearForm diff = form;
        diff.Add(fact, -1);
        if (ProvablyNonPositive(diff, ranges_)) return true;
      }
    }
    return false;
  }

  /// The claim, and for a claim g - num / d <= 0 (d a positive constant, num >= 0, so the
  /// quotient is floor(num / d)) the equivalent d * g - num <= 0: `x < (n + 3) / 4` then
  /// follows from `x * 4 + 3 < n`.
  std::vector<LinearForm> Equivalents(const LinearForm& claim) {
    std::vector<LinearForm> out = {claim};
    for (auto& [atom, coeff] : claim.terms) {
      auto* div = atom.As<Div>();
      const int64_t* d = div ? AsConstInt(div->b) : nullptr;
      if (coeff != -1 || !d || *d <= 0 || !ProvablyNonNegative(div->a, ranges_)) continue;
      LinearForm g;
      for (auto& [other, c] : claim.terms) {
        if (!other.same_as(atom)) g.terms.push_back({other, c});
      }
      g.constant = claim.constant;
      LinearForm scaled;
      scaled.Add(g, *d);
      scaled.Add(LinearForm::Of(div->a), -1);
      out.push_back(scaled);
    }
    return out;
  }

  RangeMap ranges_;
  std::vector<LinearForm> facts_;  // each holds as `fact <= 0`
  std::vector<Expr> known_exprs_;  // other conditions that hold (matched structurally)
};

}  // namespace

Stmt RemoveRedundantGuards(const Stmt& s) { return GuardRemover().Mutate(s); }

}  // namespace cinn_like::ir
