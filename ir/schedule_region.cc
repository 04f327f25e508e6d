/// \file Affine forms of index expressions and the regions compute_at infers from them.
#include "ir/schedule_region.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "ir/intrinsics.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace cinn_like::ir {
namespace {

bool IsConstant(const AffineForm& f);

/// Whether integer expressions `a` and `b` are one affine sum (their forms' difference is 0).
bool SameSum(const Expr& a, const Expr& b) {
  const AffineForm diff = Subtract(Linearize(a), Linearize(b));
  return diff.constant == 0 && IsConstant(diff);
}

/// Whether opaque terms `a` and `b` are one term: structurally equal, or quotients (remainders)
/// of one sum by one divisor. One value read through two reshapes has its index written two
/// ways, a term 0 * 4096 left in one, the sum associated another way in the other (Llama's
/// residual add read by its RMSNorm and by the next add): its accesses must agree, and the
/// offsets of a read into a computed-at region must cancel.
bool SameTerm(const Expr& a, const Expr& b) {
  if (StructuralEqual(a, b)) return true;
  if (auto* da = a.As<Div>(), *db = b.As<Div>(); da && db) {
    return SameSum(da->b, db->b) && SameSum(da->a, db->a);
  }
  if (auto* ma = a.As<Mod>(), *mb = b.As<Mod>(); ma && mb) {
    return SameSum(ma->b, mb->b) && SameSum(ma->a, mb->a);
  }
  return false;
}

void AddTerm(AffineForm* f, const Expr& e, int64_t coeff) {
  for (auto& t : f->terms) {
    if (SameTerm(t.expr, e)) {
      t.coeff += coeff;
      return;
    }
  }
  f->terms.push_back({e, coeff});
}

void Accumulate(AffineForm* into, const AffineForm& f, int64_t scale) {
  for (auto& t : f.terms) AddTerm(into, t.expr, t.coeff * scale);
  into->constant += f.constant * scale;
}

bool IsConstant(const AffineForm& f) {
  for (auto& t : f.terms) {
    if (t.coeff != 0) return false;
  }
  return true;
}

bool UsesAny(const Expr& e, const RelaxedLoops& relaxed) {
  for (auto& [v, ext] : relaxed) {
    if (UsesVar(e, v)) return true;
  }
  return false;
}

/// Rewrites x / c and x % c (c a positive constant) where x is F + R, R the terms of relaxed
/// loops with nonnegative coefficients, spanning [0, span], and F the rest, a multiple of some
/// m with span < m and m dividing c: F + R stays within one multiple of c, so x / c is F / c
/// and x % c is F % c + R. An axis fused and split into lanes gives these: row
/// (4 * A + r) / 768 of lane r < 4 is (4 * A) / 768 whichever lane reads. Indices are in
/// bounds, so x >= 0 and F >= 0: truncating and flooring division agree.
class AlignedDivMod : public IRMutator {
 public:
  explicit AlignedDivMod(const RelaxedLoops& relaxed) : relaxed_(relaxed) {}

 protected:
  Expr MutateDiv(const Div* op, const Expr& self) override {
    Expr fixed, rest;
    if (!Split(op->a, op->b, &fixed, &rest)) return IRMutator::MutateDiv(op, self);
    return Div::Make(fixed, op->b);
  }
  Expr MutateMod(const Mod* op, const Expr& self) override {
    Expr fixed, rest;
    if (!Split(op->a, op->b, &fixed, &rest)) return IRMutator::MutateMod(op, self);
    return Mod::Make(fixed, op->b) + rest;
  }

 private:
  bool Split(const Expr& x, const Expr& divisor, Expr* fixed, Expr* rest) const {
    const int64_t* c = AsConstInt(divisor);
    if (!c || *c <= 0 || !x.type().is_int()) return false;
    AffineForm form = Linearize(x), f, r;
    int64_t span = 0, m = form.constant;
    for (const auto& t : form.terms) {
      if (t.coeff == 0) continue;
      auto* v = t.expr.As<Variable>();
      auto it = v ? relaxed_.find(v) : relaxed_.end();
      if (it != relaxed_.end()) {
        if (t.coeff < 0) return false;
        span += t.coeff * (it->second - 1);
        r.terms.push_back(t);
      } else if (UsesAny(t.expr, relaxed_)) {
        return false;
      } else {
        m = std::gcd(m, t.coeff);
        f.terms.push_back(t);
      }
    }
    f.constant = form.constant;
    if (r.terms.empty() || m == 0 || span >= m || *c % m != 0) return false;
    *fixed = ToExpr(f);
    *rest = ToExpr(r);
    return true;
  }

  const RelaxedLoops& relaxed_;
};

}  // namespace

AffineForm Linearize(const Expr& e) {
  AffineForm f;
  if (auto* c = AsConstInt(e)) {
    f.constant = *c;
  } else if (auto* add = e.As<Add>()) {
    Accumulate(&f, Linearize(add->a), 1);
    Accumulate(&f, Linearize(add->b), 1);
  } else if (auto* sub = e.As<Sub>()) {
    Accumulate(&f, Linearize(sub->a), 1);
    Accumulate(&f, Linearize(sub->b), -1);
  } else if (auto* div = e.As<Div>(); div && IsConstInt(div->b, 1)) {
    return Linearize(div->a);  // x / 1, left by fusing an axis with a size-1 one
  } else if (auto* mod = e.As<Mod>(); mod && IsConstInt(mod->b, 1)) {
    return f;  // x % 1 == 0
  } else if (auto* mul = e.As<Mul>()) {
    AffineForm a = Linearize(mul->a), b = Linearize(mul->b);
    if (IsConstant(b)) {
      Accumulate(&f, a, b.constant);
    } else if (IsConstant(a)) {
      Accumulate(&f, b, a.constant);
    } else {
      AddTerm(&f, e, 1);
    }
  } else {
    AddTerm(&f, e, 1);
  }
  return f;
}

Expr ToExpr(const AffineForm& form) {
  Expr out;
  for (auto& t : form.terms) {
    if (t.coeff == 0) continue;
    Expr term = t.coeff == 1 ? t.expr : t.expr * IndexConst(t.coeff);
    out = out.defined() ? out + term : term;
  }
  if (!out.defined()) return IndexConst(form.constant);
  if (form.constant != 0) out = out + IndexConst(form.constant);
  return out;
}

AffineForm Subtract(const AffineForm& a, const AffineForm& b) {
  AffineForm out = a;
  Accumulate(&out, b, -1);
  return out;
}

absl::StatusOr<Region> InferRegion(const std::vector<std::vector<Expr>>& accesses,
                                   const RelaxedLoops& relaxed, const std::string& what) {
  Region region;
  if (accesses.empty()) return region;
  size_t rank = accesses[0].size();
  for (size_t d = 0; d < rank; ++d) {
    AffineForm fixed_form;
    Expr first_fixed;
    int64_t lo = 0, hi = 0;
    // Strided when every access has one relaxed term, the same variable with the same
    // coefficient > 1, and constants congruent modulo it.
    bool strided = true;
    Expr stride_term;
    int64_t stride = 0, residue = 0;
    for (size_t a = 0; a < accesses.size(); ++a) {
      const Expr index = AlignedDivMod(relaxed).Mutate(accesses[a][d]);
      AffineForm form = Linearize(index);
      AffineForm fixed;
      int64_t alo = form.constant, ahi = form.constant;
      int relaxed_terms = 0;
      for (auto& t : form.terms) {
        if (t.coeff == 0) continue;
        auto* v = t.expr.As<Variable>();
        auto it = v ? relaxed.find(v) : relaxed.end();
        if (it != relaxed.end()) {
          if (++relaxed_terms == 1 && a == 0) {
            stride_term = t.expr;
            stride = t.coeff;
            residue = stride > 1 ? form.constant % stride : 0;
          } else if (relaxed_terms > 1 || !StructuralEqual(t.expr, stride_term) ||
                     t.coeff != stride || stride <= 1 || form.constant % stride != residue) {
            strided = false;
          }
          int64_t span = t.coeff * (it->second - 1);
          (span < 0 ? alo : ahi) += span;
        } else if (!v && UsesAny(t.expr, relaxed)) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": index ", ToString(index), " of dimension ", d,
              " is not affine in the loops inside the attach point (term ", ToString(t.expr), ")"));
        } else {
          fixed.terms.push_back(t);
        }
      }
      strided &= relaxed_terms == 1 && stride > 1;
      Expr this_fixed = ToExpr(fixed);
      if (a == 0) {
        first_fixed = this_fixed;
        fixed_form = fixed;
        lo = alo;
        hi = ahi;
      } else if (!IsConstant(Subtract(fixed, fixed_form))) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": accesses disagree in dimension ", d, " (", ToString(first_fixed), " vs ",
            ToString(this_fixed), "); the region would not have a constant shape"));
      } else {
        lo = std::min(lo, alo);
        hi = std::max(hi, ahi);
      }
    }
    fixed_form.constant = lo;
    region.min.push_back(ToExpr(fixed_form));
    region.stride.push_back(strided ? stride : 1);
    region.extent.push_back(strided ? (hi - lo) / stride + 1 : hi - lo + 1);
  }
  return region;
}

Expr ThreadIndexExpr(int axis) {
  return Call::Make(IndexType(), IntrinsicOp::kThreadIndex, {Expr(axis)});
}

}  // namespace cinn_like::ir
