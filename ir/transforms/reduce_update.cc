/// \file Matching reduction updates and their regions.
#include "ir/transforms/reduce_update.h"

#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace cinn_like::ir {
namespace {

void Conjuncts(const Expr& cond, std::vector<Expr>* out) {
  if (auto* a = cond.As<And>()) {
    Conjuncts(a->a, out);
    Conjuncts(a->b, out);
  } else {
    out->push_back(cond);
  }
}

}  // namespace

bool MatchReduceUpdate(const Store* op, ReduceKind* kind, Expr* e) {
  auto is_acc = [&](const Expr& x) {
    auto* load = x.As<Load>();
    return load && load->buffer == op->buffer && StructuralEqual(load->indices, op->indices);
  };
  auto match = [&](const BinaryNode* b, ReduceKind k) {
    if (!b) return false;
    if (is_acc(b->a)) {
      *e = b->b;
    } else if (is_acc(b->b)) {
      *e = b->a;
    } else {
      return false;
    }
    *kind = k;
    return true;
  };
  return match(op->value.As<Add>(), ReduceKind::kSum) ||
         match(op->value.As<Max>(), ReduceKind::kMax) ||
         match(op->value.As<Min>(), ReduceKind::kMin) ||
         match(op->value.As<Mul>(), ReduceKind::kProd);
}

size_t ReductionRegionStart(const std::vector<const For*>& loops, const Store* update) {
  auto used = [&](const Variable* v) {
    for (auto& e : update->indices) {
      if (UsesVar(e, v)) return true;
    }
    return false;
  };
  size_t r = loops.size();
  while (r > 0 && !used(loops[r - 1]->loop_var.node())) --r;
  return r;
}

void AddGuardsFreeOf(const Expr& cond, const std::set<const Variable*>& vars,
                     std::vector<Expr>* out) {
  std::vector<Expr> terms;
  Conjuncts(cond, &terms);
  for (auto& t : terms) {
    bool inner = false;
    for (const Variable* v : vars) inner |= UsesVar(t, v);
    if (inner) continue;
    bool seen = false;
    for (auto& g : *out) seen |= StructuralEqual(g, t);
    if (!seen) out->push_back(t);
  }
}

}  // namespace cinn_like::ir
