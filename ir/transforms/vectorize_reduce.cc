/// \file VectorizeReductions: vector partials for reductions over a vectorized loop, with the
/// tail of a split reduce axis peeled off so that the main loop has no lane-dependent guard.
#include "ir/transforms/vectorize_reduce.h"

#include <set>

#include "ir/mutator.h"
#include "ir/substitute.h"
#include "ir/tensor.h"
#include "ir/transforms/reduce_update.h"
#include "ir/transforms/simplify.h"

namespace cinn_like::ir {
namespace {

IntrinsicOp IntrinsicOf(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return IntrinsicOp::kVectorReduceSum;
    case ReduceKind::kMax:
      return IntrinsicOp::kVectorReduceMax;
    case ReduceKind::kProd:
      return IntrinsicOp::kVectorReduceProd;
    default:
      return IntrinsicOp::kVectorReduceMin;
  }
}

/// One reduction update under a vectorized loop, and the region around it.
struct Region {
  const For* top = nullptr;  // outermost loop of the region
  const For* vec = nullptr;  // the vectorized loop inside it
  int64_t lanes = 0;
  const Store* update = nullptr;
  ReduceKind kind = ReduceKind::kNone;
  Expr value;  // e of combine(X[idx], e)
  std::set<const Variable*> loop_vars;
};

bool IsVar(const Expr& e, const Variable* v) { return e.As<Variable>() == v; }

/// E when `term` is `o * lanes + v < E` (E free of o and v), else undefined.
Expr MatchTailGuard(const Expr& term, const Variable* o, const Variable* v, int64_t lanes) {
  auto* lt = term.As<LT>();
  auto* add = lt ? lt->a.As<Add>() : nullptr;
  if (!add) return Expr();
  Expr scaled = IsVar(add->b, v) ? add->a : IsVar(add->a, v) ? add->b : Expr();
  auto* mul = scaled.defined() ? scaled.As<Mul>() : nullptr;
  if (!mul) return Expr();
  bool ok = (IsVar(mul->a, o) && IsConstInt(mul->b, lanes)) ||
            (IsVar(mul->b, o) && IsConstInt(mul->a, lanes));
  if (!ok || UsesVar(lt->b, o) || UsesVar(lt->b, v)) return Expr();
  return lt->b;
}

Expr AllOf(const std::vector<Expr>& terms) {
  Expr cond;
  for (auto& t : terms) cond = cond.defined() ? cond && t : t;
  return cond;
}

/// Rewrites a region's statement: the update accumulates into lane v of the partials, guards
/// independent of the region are collected, and a split tail around the vector loop is peeled.
class RegionRewriter : public IRMutator {
 public:
  RegionRewriter(const Region& region, Buffer partials)
      : region_(region), partials_(std::move(partials)) {}
  using IRMutator::Mutate;
  std::vector<Expr> outer_guards;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    if (op->body.get() == region_.vec && op->for_kind == ForKind::kSerial &&
        IsConstInt(op->min, 0)) {
      Stmt peeled = Peel(op);
      if (peeled.defined()) return peeled;
    }
    return IRMutator::MutateFor(op, self);
  }
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    if (op != region_.update) return self;
    Expr lane = Simplify(region_.vec->loop_var - region_.vec->min);
    Expr acc = Load::Make(partials_, {lane});
    return Store::Make(partials_, {lane}, ReduceCombine(region_.kind, acc, region_.value));
  }
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    AddGuardsFreeOf(op->cond, region_.loop_vars, &outer_guards);
    return IRMutator::MutateIfThenElse(op, self);
  }

 private:
  /// for o: for v (vectorized): if (o * L + v < E && rest) body
  ///   => for o in [0, E / L): for v (vectorized): if (rest) body
  ///      for o' in [E / L, extent): for v' (serial): if (o' * L + v' < E && rest) body
  Stmt Peel(const For* outer) {
    const For* vec = region_.vec;
    auto* guard = vec->body.As<IfThenElse>();
    if (!guard || guard->else_case.defined()) return Stmt();
    std::vector<Expr> terms, rest;
    AddGuardsFreeOf(guard->cond, {}, &terms);
    Expr bound_of_v;
    for (auto& t : terms) {
      Expr e = bound_of_v.defined()
                   ? Expr()
                   : MatchTailGuard(t, outer->loop_var.node(), vec->loop_var.node(), region_.lanes);
      if (e.defined()) {
        bound_of_v = e;
      } else {
        rest.push_back(t);
      }
    }
    if (!bound_of_v.defined() || !IsConstInt(vec->min, 0)) return Stmt();
    AddGuardsFreeOf(guard->cond, region_.loop_vars, &outer_guards);
    Stmt body = Mutate(guard->then_case);
    Expr full = Simplify(bound_of_v / Expr(static_cast<int>(region_.lanes)));
    Stmt main_body = rest.empty() ? body : IfThenElse::Make(AllOf(rest), body);
    Stmt main =
        For::Make(outer->loop_var, 0, full, ForKind::kSerial,
                  For::Make(vec->loop_var, vec->min, vec->extent, ForKind::kVectorized, main_body));
    Var o2(outer->loop_var.name() + "_tail", outer->loop_var.type());
    Var v2(vec->loop_var.name() + "_tail", vec->loop_var.type());
    VarMap rename{{outer->loop_var.node(), o2}, {vec->loop_var.node(), v2}};
    Stmt tail_body = Substitute(IfThenElse::Make(guard->cond, body), rename);
    Stmt tail = For::Make(o2, full, Simplify(outer->extent - full), ForKind::kSerial,
                          For::Make(v2, vec->min, vec->extent, ForKind::kSerial, tail_body));
    return Block::Make({main, tail});
  }

  const Region& region_;
  Buffer partials_;
};

class ReductionVectorizer : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    loops_.push_back(op);
    Stmt body = Mutate(op->body);
    loops_.pop_back();
    if (pending_.top == op) {
      Stmt out = Rewrite(self);
      pending_ = Region();
      return out;
    }
    if (body.same_as(op->body)) return self;
    return For::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->bind_axis);
  }

  Stmt MutateStore(const Store* op, const Stmt& self) override {
    Region region;
    if (pending_.top || !MatchReduceUpdate(op, &region.kind, &region.value)) return self;
    if (!region.value.type().is_scalar()) return self;
    size_t r = ReductionRegionStart(loops_, op);
    for (size_t k = r; k < loops_.size(); ++k) {
      const For* loop = loops_[k];
      region.loop_vars.insert(loop->loop_var.node());
      const int64_t* lanes = AsConstInt(loop->extent);
      if (loop->for_kind != ForKind::kVectorized || !lanes || *lanes < 2) continue;
      if (region.vec) return self;  // two vector loops: left to VectorizeLoops
      region.vec = loop;
      region.lanes = *lanes;
    }
    if (!region.vec) return self;
    region.top = loops_[r];
    region.update = op;
    pending_ = region;
    return self;
  }

 private:
  Stmt Rewrite(const Stmt& top) {
    const Store* update = pending_.update;
    Type t = update->value.type();
    int lanes = static_cast<int>(pending_.lanes);
    Buffer partials =
        MakeBuffer(update->buffer->name + "_vacc", t, {Expr(lanes)}, MemoryScope::kLocal);
    Var lane(pending_.vec->loop_var.name() + "_init", pending_.vec->loop_var.type());
    Stmt init = For::Make(lane, 0, lanes, ForKind::kVectorized,
                          Store::Make(partials, {lane}, ReduceInit(pending_.kind, t)));
    RegionRewriter rewriter(pending_, partials);
    Stmt body = rewriter.Mutate(top);
    Expr total = Call::Make(t, IntrinsicOf(pending_.kind),
                            {Load::Make(partials, {Ramp::Make(Expr(0), Expr(1), lanes)})});
    Stmt result = Store::Make(
        update->buffer, update->indices,
        ReduceCombine(pending_.kind, Load::Make(update->buffer, update->indices), total));
    if (!rewriter.outer_guards.empty()) {
      result = IfThenElse::Make(AllOf(rewriter.outer_guards), result);
    }
    return Allocate::Make(partials, Block::Make({init, body, result}));
  }

  std::vector<const For*> loops_;
  Region pending_;
};

}  // namespace

Stmt VectorizeReductions(const Stmt& s) { return ReductionVectorizer().Mutate(s); }

}  // namespace cinn_like::ir
