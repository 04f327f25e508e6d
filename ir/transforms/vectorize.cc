/// \file The vectorize pass: substitute a ramp for the loop variable and widen the body.
#include "ir/transforms/vectorize.h"

#include <glog/logging.h>

#include <algorithm>

#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/substitute.h"
#include "ir/transforms/linear_form.h"
#include "ir/transforms/reduce_update.h"
#include "ir/transforms/simplify.h"

namespace cinn_like::ir {
namespace {

Expr Widen(const Expr& e, int lanes) {
  if (e.type().lanes() == lanes) return e;
  return Broadcast::Make(e, lanes);
}

/// Widens a body in which one variable is replaced by a ramp. Sets `failed_` (with a reason)
/// when the body cannot run lane-parallel.
class Widener : public IRMutator {
 public:
  Widener(const Variable* var, Expr ramp) : var_(var), ramp_(std::move(ramp)) {}
  using IRMutator::Mutate;
  std::string failure;
  /// Lane-dependent guards dropped from the vector body (scalar, as written).
  std::vector<Expr> lane_guards;

 protected:
  Expr MutateVariable(const Variable* op, const Expr& self) override {
    return op == var_ ? ramp_ : self;
  }

#define CINN_LIKE_WIDEN_BINARY(name, sym)                        \
  Expr Mutate##name(const name* op, const Expr& self) override { \
    Expr a = Mutate(op->a), b = Mutate(op->b);                   \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;       \
    int lanes = std::max(a.type().lanes(), b.type().lanes());    \
    return name::Make(Widen(a, lanes), Widen(b, lanes));         \
  }
  CINN_LIKE_BINARY_NODES(CINN_LIKE_WIDEN_BINARY)
#undef CINN_LIKE_WIDEN_BINARY

  Expr MutateSelect(const Select* op, const Expr& self) override {
    Expr c = Mutate(op->cond), t = Mutate(op->true_value), f = Mutate(op->false_value);
    if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    int lanes = std::max({c.type().lanes(), t.type().lanes(), f.type().lanes()});
    return Select::Make(Widen(c, lanes), Widen(t, lanes), Widen(f, lanes));
  }

  Expr MutateCast(const Cast* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    if (v.same_as(op->value)) return self;
    return Cast::Make(op->type.WithLanes(v.type().lanes()), v);
  }

  Expr MutateLoad(const Load* op, const Expr& self) override {
    std::vector<Expr> idx;
    if (!MutateAll(op->indices, &idx)) return self;
    return Load::Make(op->buffer, WidenAll(idx));
  }

  Expr MutateCall(const Call* op, const Expr& self) override {
    std::vector<Expr> args;
    if (!MutateAll(op->args, &args)) return self;
    if (op->call_kind != Call::CallKind::kPure && !IsLanewise(*op->intrinsic)) {
      failure = "it calls " + op->name + " with a lane-dependent argument";
      return self;
    }
    args = WidenAll(args);
    return op->WithArgs(op->type.WithLanes(args[0].type().lanes()), args);
  }

  Stmt MutateStore(const Store* op, const Stmt& self) override {
    std::vector<Expr> idx;
    bool changed = MutateAll(op->indices, &idx);
    Expr v = Mutate(op->value);
    if (!changed && v.same_as(op->value)) return self;
    idx = WidenAll(idx);
    int lanes = idx[0].type().lanes();
    ReduceKind kind = ReduceKind::kNone;
    Expr term;
    if (lanes == 1 && v.type().is_vector() && MatchReduceUpdate(op, &kind, &term) &&
        !ReadsBuffer(term, op->buffer.get())) {  // a reduction's term never reads its accumulator
      // A reduction into one element (a GPU thread's partial): the lanes' terms combined
      // first, then into the element (reassociated, as VectorizeReductions does on CPUs).
      Expr lanes_term = Mutate(term);
      if (lanes_term.type().is_vector()) {
        Expr total = Call::Make(op->value.type(),
                                CombinePartials(kind, PartialsAcross::kVectorLanes), {lanes_term});
        return Store::Make(op->buffer, op->indices,
                           ReduceCombine(kind, Load::Make(op->buffer, op->indices), total));
      }
    }
    if (lanes == 1 && v.type().is_vector()) {
      failure = "it stores a lane-dependent value to the single element " + op->buffer->name + "[" +
                ToString(op->indices[0]) + (op->indices.size() > 1 ? ", ..." : "") + "]";
      return self;
    }
    return Store::Make(op->buffer, idx, Widen(v, lanes));
  }

  /// The lane-dependent conjuncts of a guard without else (the tail guard of a non-exact
  /// split) are recorded in lane_guards and dropped: the vector body runs only where they hold
  /// for every lane. The other conjuncts stay a scalar guard.
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    Expr c = Mutate(op->cond);
    if (!c.type().is_vector()) return IRMutator::MutateIfThenElse(op, self);
    if (op->else_case.defined()) {
      failure = "its condition " + ToString(op->cond) + " depends on the lane and has an else";
      return self;
    }
    std::vector<Expr> scalar;
    for (const Expr& conj : SplitConjunction(op->cond)) {
      if (!UsesVar(conj, var_)) {
        scalar.push_back(conj);
        continue;
      }
      for (const Variable* v : inner_vars_) {
        if (UsesVar(conj, v)) {
          failure = "its condition " + ToString(conj) + " depends on the lane and on inner loop " +
                    v->name;
          return self;
        }
      }
      bool seen = false;
      for (auto& g : lane_guards) seen |= StructuralEqual(g, conj);
      if (!seen) lane_guards.push_back(conj);
    }
    Stmt then_case = Mutate(op->then_case);
    return scalar.empty() ? then_case : IfThenElse::Make(JoinConjunction(scalar), then_case);
  }

  Stmt MutateFor(const For* op, const Stmt& self) override {
    Expr mn = Mutate(op->min), ext = Mutate(op->extent);
    if (mn.type().is_vector() || ext.type().is_vector()) {
      failure = "the bounds of inner loop " + op->loop_var.name() + " depend on the lane";
      return self;
    }
    inner_vars_.push_back(op->loop_var.node());
    Stmt s = IRMutator::MutateFor(op, self);
    inner_vars_.pop_back();
    return s;
  }

  Stmt MutateLetStmt(const LetStmt* op, const Stmt& self) override {
    if (Mutate(op->value).type().is_vector()) {
      failure = "it binds " + op->var.name() + " to a lane-dependent value";
      return self;
    }
    return IRMutator::MutateLetStmt(op, self);
  }

  Stmt MutateAllocate(const Allocate* op, const Stmt& self) override {
    failure = "it allocates " + op->buffer->name;
    return self;
  }

 private:
  static std::vector<Expr> WidenAll(std::vector<Expr> list) {
    int lanes = 1;
    for (auto& e : list) lanes = std::max(lanes, e.type().lanes());
    for (auto& e : list) e = Widen(e, lanes);
    return list;
  }

  const Variable* var_;
  Expr ramp_;
  std::vector<const Variable*> inner_vars_;
};

class Vectorizer : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    const int64_t* lanes = AsConstInt(op->extent);
    if (op->for_kind != ForKind::kVectorized || !lanes || *lanes < 2) {
      if (op->for_kind == ForKind::kVectorized) {
        LOG(WARNING) << "cannot vectorize loop " << op->loop_var.name() << ": its extent "
                     << op->extent << " is not a constant of 2 or more; it stays serial";
        return For::Make(op->loop_var, op->min, op->extent, ForKind::kSerial, body);
      }
      if (body.same_as(op->body)) return self;
      return For::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->bind_axis);
    }
    Widener widen(op->loop_var.node(), Ramp::Make(op->min, Expr(1), static_cast<int>(*lanes)));
    Stmt vector_body = widen.Mutate(body);
    Stmt serial = For::Make(op->loop_var, op->min, op->extent, ForKind::kSerial, body);
    std::vector<Expr> all_lanes;
    for (const Expr& g : widen.lane_guards) {
      all_lanes.push_back(HoldsForEveryValue(g, op->loop_var.node(), op->min, *lanes));
      if (!all_lanes.back().defined() && widen.failure.empty()) {
        widen.failure = "its condition " + ToString(g) + " is not affine in the lane";
      }
    }
    if (!widen.failure.empty()) {
      LOG(WARNING) << "cannot vectorize loop " << op->loop_var.name() << ": " << widen.failure
                   << "; it stays serial";
      return serial;
    }
    if (all_lanes.empty()) return vector_body;
    // Guarded lanes: the vector body where every lane is in bounds, else the scalar tail.
    return IfThenElse::Make(JoinConjunction(all_lanes), vector_body, serial);
  }
};

}  // namespace

Stmt VectorizeLoops(const Stmt& s) { return Vectorizer().Mutate(s); }

}  // namespace cinn_like::ir
