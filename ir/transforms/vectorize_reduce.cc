/// \file VectorizeReductions: vector partials for reductions over a vectorized loop, with the
/// tail of a split reduce axis peeled off so that the main loop has no lane-dependent guard.
#include "ir/transforms/vectorize_reduce.h"

#include "ir/mutator.h"
#include "ir/substitute.h"
#include "ir/tensor.h"
#include "ir/transforms/reduce_update.h"
#include "ir/transforms/simplify.h"

namespace cinn_like::ir {
namespace {

/// The constant lane count of a region's vectorized loop.
int64_t LanesOf(const ReduceRegion& region) { return *AsConstInt(region.loop->extent); }

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
class RegionRewriter : public PartialsRewriter {
 public:
  RegionRewriter(const ReduceRegion& region, Buffer partials)
      : PartialsRewriter(region, std::move(partials),
                         Simplify(region.loop->loop_var - region.loop->min)) {}

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    if (op->body.get() == region_.loop && op->for_kind == ForKind::kSerial &&
        IsConstInt(op->min, 0)) {
      Stmt peeled = Peel(op);
      if (peeled.defined()) return peeled;
    }
    return IRMutator::MutateFor(op, self);
  }

 private:
  /// for o: for v (vectorized): if (o * L + v < E && rest) body
  ///   => for o in [0, E / L): for v (vectorized): if (rest) body
  ///      for o' in [E / L, extent): for v' (serial): if (o' * L + v' < E && rest) body
  Stmt Peel(const For* outer) {
    const For* vec = region_.loop;
    int64_t lanes = LanesOf(region_);
    auto* guard = vec->body.As<IfThenElse>();
    if (!guard || guard->else_case.defined()) return Stmt();
    std::vector<Expr> terms, rest;
    AddGuardsFreeOf(guard->cond, {}, &terms);
    Expr bound_of_v;
    for (auto& t : terms) {
      Expr e = bound_of_v.defined()
                   ? Expr()
                   : MatchTailGuard(t, outer->loop_var.node(), vec->loop_var.node(), lanes);
      if (e.defined()) {
        bound_of_v = e;
      } else {
        rest.push_back(t);
      }
    }
    if (!bound_of_v.defined() || !IsConstInt(vec->min, 0)) return Stmt();
    AddGuardsFreeOf(guard->cond, region_.loop_vars, &outer_guards);
    Stmt body = Mutate(guard->then_case);
    Expr full = Simplify(bound_of_v / IndexConst(lanes));
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
};

class ReductionVectorizer : public ReduceRegionMutator {
 protected:
  /// The region's vectorized loop of constant extent; none when there are two (they are left
  /// to VectorizeLoops) or the update is a vector.
  const For* PickLoop(const ReduceRegion& region, const std::vector<const For*>& loops) override {
    if (!region.value.type().is_scalar()) return nullptr;
    const For* vec = nullptr;
    for (const For* loop : loops) {
      const int64_t* lanes = AsConstInt(loop->extent);
      if (loop->for_kind != ForKind::kVectorized || !lanes || *lanes < 2) continue;
      if (vec) return nullptr;
      vec = loop;
    }
    return vec;
  }

  Stmt RewriteRegion(const Stmt& top, const ReduceRegion& region) override {
    const Store* update = region.update;
    Type t = update->value.type();
    int lanes = static_cast<int>(LanesOf(region));
    Buffer partials =
        MakeBuffer(update->buffer->name + "_vacc", t, {Expr(lanes)}, MemoryScope::kLocal);
    Var lane(region.loop->loop_var.name() + "_init", region.loop->loop_var.type());
    Stmt init = For::Make(lane, 0, lanes, ForKind::kVectorized,
                          Store::Make(partials, {lane}, ReduceInit(region.kind, t)));
    RegionRewriter rewriter(region, partials);
    Stmt body = rewriter.Mutate(top);
    Expr total = Call::Make(t, CombinePartials(region.kind, PartialsAcross::kVectorLanes),
                            {Load::Make(partials, {Ramp::Make(Expr(0), Expr(1), lanes)})});
    Stmt result =
        Store::Make(update->buffer, update->indices,
                    ReduceCombine(region.kind, Load::Make(update->buffer, update->indices), total));
    if (!rewriter.outer_guards.empty()) {
      result = IfThenElse::Make(AllOf(rewriter.outer_guards), result);
    }
    return Allocate::Make(partials, Block::Make({init, body, result}));
  }
};

}  // namespace

Stmt VectorizeReductions(const Stmt& s) { return ReductionVectorizer().Mutate(s); }

}  // namespace cinn_like::ir
