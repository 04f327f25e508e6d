/// \file PartitionLoops: the bound where each guard starts to matter, found on affine forms.
#include "ir/transforms/loop_partition.h"

#include "ir/mutator.h"
#include "ir/substitute.h"
#include "ir/transforms/linear_form.h"
#include "ir/transforms/simplify.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

bool IsBound(ForKind k) { return k == ForKind::kGpuBlock || k == ForKind::kGpuThread; }

/// Whether a GPU-bound loop is nested in s: a loop around one keeps the kernel's shape.
bool HasBoundLoop(const Stmt& s) {
  struct Finder : IRVisitor {
    using IRVisitor::Visit;
    bool found = false;
    void VisitFor(const For* op) override {
      found |= IsBound(op->for_kind);
      IRVisitor::VisitFor(op);
    }
  } f;
  f.Visit(s);
  return f.found;
}

/// Whether every thread of a block must run s in step: it touches shared memory (insert_sync,
/// which runs later, may put a barrier in it) or calls a block reduce (which synchronizes).
bool Synchronizes(const Stmt& s) {
  struct Finder : IRVisitor {
    using IRVisitor::Visit;
    bool found = false;
    void VisitLoad(const Load* op) override {
      found |= op->buffer->scope == MemoryScope::kShared;
      IRVisitor::VisitLoad(op);
    }
    void VisitStore(const Store* op) override {
      found |= op->buffer->scope == MemoryScope::kShared;
      IRVisitor::VisitStore(op);
    }
    void VisitCall(const Call* op) override {
      found |= op->intrinsic && IsBlockReduce(*op->intrinsic);
      IRVisitor::VisitCall(op);
    }
  } f;
  f.Visit(s);
  return f.found;
}

/// min(a, b), decided when both are quotients (x + c1) / d and (x + c2) / d by one positive
/// constant with non-negative numerators: the one with the smaller constant. The common case is
/// a split's extent (n + f - 1) / f against the partition bound n / f.
Expr MinOf(const Expr& a, const Expr& b) {
  auto *da = a.As<Div>(), *db = b.As<Div>();
  const int64_t* d = da ? AsConstInt(da->b) : nullptr;
  if (d && *d > 0 && db && IsConstInt(db->b, *d) && ProvablyNonNegative(da->a, {}) &&
      ProvablyNonNegative(db->a, {})) {
    LinearForm diff = LinearForm::Of(da->a);
    diff.Add(LinearForm::Of(db->a), -1);
    if (diff.terms.empty()) return diff.constant <= 0 ? a : b;
  }
  return min(a, b);
}

/// The guard conjuncts under a loop over `o` that depend on o: for each, the value below which
/// it holds for every iteration of the loops between o and the guard, or a failure.
class GuardCollector : public IRVisitor {
 public:
  explicit GuardCollector(const Var& o) : o_(o) {}
  using IRVisitor::Visit;
  std::vector<std::pair<Expr, Expr>> holds_below;  // (conjunct, bound): holds when o < bound
  std::vector<Expr> failed;

 protected:
  void VisitFor(const For* op) override {
    inner_[op->loop_var.node()] = {op->min, op->min + op->extent - 1};
    IRVisitor::VisitFor(op);
    inner_.erase(op->loop_var.node());
  }
  void VisitLetStmt(const LetStmt* op) override {
    inner_[op->var.node()] = {op->value, op->value};
    IRVisitor::VisitLetStmt(op);
    inner_.erase(op->var.node());
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    if (!op->else_case.defined()) {
      for (const Expr& c : SplitConjunction(op->cond)) {
        if (!UsesVar(c, o_.node())) continue;
        Expr bound = HoldsBelow(c);
        if (bound.defined()) {
          holds_below.push_back({c, bound});
        } else {
          failed.push_back(c);
        }
      }
    }
    IRVisitor::VisitIfThenElse(op);
  }

 private:
  /// For the claim a*o + rest <= 0 (rest bounded over the inner loops): o < (a - rest) / a.
  Expr HoldsBelow(const Expr& c) {
    auto claim = AsNonPositiveClaim(c);
    if (!claim) return Expr();
    LinearForm ub = UpperBound(*claim, inner_);
    if (ub.UsesInsideAtom(o_.node())) return Expr();
    int64_t a = ub.Coeff(o_.node());
    if (a <= 0) return Expr();
    LinearForm num;
    num.Add(ub.Without(o_.node()), -1);
    num.constant += a;
    Type t = o_.type();
    Expr bound = Max::Make(num.ToExpr(t), MakeConst(t, 0)) / MakeConst(t, static_cast<double>(a));
    for (auto& [v, range] : inner_) {
      if (UsesVar(bound, v)) return Expr();
    }
    return bound;
  }

  const Var o_;
  RangeMap inner_;
};

/// Removes the given conjuncts from every guard without else; a guard left empty becomes its body.
class ConjunctDropper : public IRMutator {
 public:
  explicit ConjunctDropper(std::vector<Expr> drop) : drop_(std::move(drop)) {}
  using IRMutator::Mutate;

 protected:
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    if (op->else_case.defined()) return IRMutator::MutateIfThenElse(op, self);
    std::vector<Expr> kept;
    for (const Expr& c : SplitConjunction(op->cond)) {
      bool drop = false;
      for (const Expr& d : drop_) drop |= StructuralEqual(c, d);
      if (!drop) kept.push_back(c);
    }
    Stmt then_case = Mutate(op->then_case);
    if (kept.empty()) return then_case;
    return IfThenElse::Make(JoinConjunction(kept), then_case);
  }

 private:
  std::vector<Expr> drop_;
};

class Partitioner : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    return HoistGuard(Partition(op, self));
  }

  /// The loop `out`, with a guard that is its whole body and does not depend on its variable
  /// (a column past the end, around a column's reduction loop) outside it instead: tested
  /// once, not per iteration. Anything else as it is.
  static Stmt HoistGuard(const Stmt& out) {
    const For* loop = out.As<For>();
    if (!loop || (loop->for_kind != ForKind::kSerial && loop->for_kind != ForKind::kParallel)) {
      return out;
    }
    const IfThenElse* guard = loop->body.As<IfThenElse>();
    if (!guard || guard->else_case.defined() || UsesVar(guard->cond, loop->loop_var.node())) {
      return out;
    }
    return IfThenElse::Make(guard->cond,
                            For::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind,
                                      guard->then_case, loop->bind_axis));
  }

  Stmt Partition(const For* op, const Stmt& self) {
    bool whole = IsBound(op->for_kind) || op->for_kind == ForKind::kVectorized ||
                 op->for_kind == ForKind::kUnrolled || op->for_kind == ForKind::kUnrollHint ||
                 HasBoundLoop(op->body);
    if (op->for_kind == ForKind::kGpuThread) {
      thread_vars_.push_back(op->loop_var.node());
      Stmt out = IRMutator::MutateFor(op, self);
      thread_vars_.pop_back();
      return out;
    }
    if (whole) return IRMutator::MutateFor(op, self);
    GuardCollector guards(op->loop_var);
    guards.Visit(op->body);
    // A split point that differs between threads would let them run a barrier of the body a
    // different number of times in each part: such a body is split only where all agree.
    bool in_step = Synchronizes(op->body);
    std::vector<Expr> drop;
    Expr limit;
    for (auto& [c, bound] : guards.holds_below) {
      bool failed = false;
      for (const Expr& f : guards.failed) failed |= StructuralEqual(c, f);
      for (const Variable* t : thread_vars_) failed |= in_step && UsesVar(bound, t);
      if (failed) continue;
      drop.push_back(c);
      bound = Simplify(bound);
      limit = limit.defined() ? MinOf(limit, bound) : bound;
    }
    if (drop.empty()) return IRMutator::MutateFor(op, self);
    Type t = op->loop_var.type();
    Expr main_extent = MinOf(op->extent, Simplify(max(limit - op->min, MakeConst(t, 0))));
    Stmt main_body = Mutate(ConjunctDropper(drop).Mutate(op->body));
    // The tail keeps the guards and is not partitioned further (it runs few iterations). It
    // gets its own variable (same name): each variable has one binding loop.
    Var tail_var(op->loop_var.name(), t);
    Stmt tail_body = Substitute(op->body, {{op->loop_var.node(), tail_var}});
    return Block::Make(
        {HoistGuard(
             For::Make(op->loop_var, op->min, main_extent, op->for_kind, main_body, op->bind_axis)),
         For::Make(tail_var, Simplify(op->min + main_extent), Simplify(op->extent - main_extent),
                   op->for_kind, tail_body, op->bind_axis)});
  }

 private:
  std::vector<const Variable*> thread_vars_;  // of the enclosing threadIdx loops
};

}  // namespace

Stmt PartitionLoops(const Stmt& s) { return Partitioner().Mutate(s); }

}  // namespace cinn_like::ir
