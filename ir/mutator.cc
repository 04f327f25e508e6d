/// \file Default rewriting: rebuild a node only when a child changed.
#include "ir/mutator.h"

namespace cinn_like::ir {

Expr IRMutator::Mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define CINN_LIKE_DISPATCH(name) \
  case IrNodeKind::k##name:      \
    return Mutate##name(static_cast<const name*>(e.get()), e);
    CINN_LIKE_EXPR_NODES(CINN_LIKE_DISPATCH)
#undef CINN_LIKE_DISPATCH
    default:
      return e;
  }
}

Stmt IRMutator::Mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define CINN_LIKE_DISPATCH(name) \
  case IrNodeKind::k##name:      \
    return Mutate##name(static_cast<const name*>(s.get()), s);
    CINN_LIKE_STMT_NODES(CINN_LIKE_DISPATCH)
#undef CINN_LIKE_DISPATCH
    default:
      return s;
  }
}

bool IRMutator::MutateAll(const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  out->clear();
  for (auto& e : in) {
    out->push_back(Mutate(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

Expr IRMutator::MutateIntImm(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::MutateFloatImm(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::MutateStringImm(const StringImm*, const Expr& self) { return self; }
Expr IRMutator::MutateVariable(const Variable*, const Expr& self) { return self; }

#define CINN_LIKE_MUTATE_BINARY(name, sym)                         \
  Expr IRMutator::Mutate##name(const name* op, const Expr& self) { \
    Expr a = Mutate(op->a), b = Mutate(op->b);                     \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;         \
    return name::Make(a, b);                                       \
  }
CINN_LIKE_BINARY_NODES(CINN_LIKE_MUTATE_BINARY)
#undef CINN_LIKE_MUTATE_BINARY

Expr IRMutator::MutateNot(const Not* op, const Expr& self) {
  Expr a = Mutate(op->a);
  return a.same_as(op->a) ? self : Not::Make(a);
}

Expr IRMutator::MutateSelect(const Select* op, const Expr& self) {
  Expr c = Mutate(op->cond), t = Mutate(op->true_value), f = Mutate(op->false_value);
  if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return Select::Make(c, t, f);
}

Expr IRMutator::MutateCast(const Cast* op, const Expr& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Cast::Make(op->type, v);
}

Expr IRMutator::MutateLoad(const Load* op, const Expr& self) {
  std::vector<Expr> idx;
  if (!MutateAll(op->indices, &idx)) return self;
  return Load::Make(op->buffer, idx);
}

Expr IRMutator::MutateRamp(const Ramp* op, const Expr& self) {
  Expr b = Mutate(op->base), s = Mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return self;
  return Ramp::Make(b, s, op->lanes);
}

Expr IRMutator::MutateBroadcast(const Broadcast* op, const Expr& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Broadcast::Make(v, op->lanes);
}

Expr IRMutator::MutateCall(const Call* op, const Expr& self) {
  std::vector<Expr> args;
  if (!MutateAll(op->args, &args)) return self;
  return op->WithArgs(op->type, std::move(args));
}

Stmt IRMutator::MutateStore(const Store* op, const Stmt& self) {
  std::vector<Expr> idx;
  bool changed = MutateAll(op->indices, &idx);
  Expr v = Mutate(op->value);
  if (!changed && v.same_as(op->value)) return self;
  return Store::Make(op->buffer, idx, v);
}

Stmt IRMutator::MutateFor(const For* op, const Stmt& self) {
  Expr mn = Mutate(op->min), ext = Mutate(op->extent);
  Stmt body = Mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
  return For::Make(op->loop_var, mn, ext, op->for_kind, body, op->bind_axis);
}

Stmt IRMutator::MutateIfThenElse(const IfThenElse* op, const Stmt& self) {
  Expr c = Mutate(op->cond);
  Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
  if (c.same_as(op->cond) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
  return IfThenElse::Make(c, t, e);
}

Stmt IRMutator::MutateBlock(const Block* op, const Stmt& self) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (auto& s : op->stmts) {
    stmts.push_back(Mutate(s));
    changed |= !stmts.back().same_as(s);
  }
  return changed ? Block::Make(stmts) : self;
}

Stmt IRMutator::MutateEvaluate(const Evaluate* op, const Stmt& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Evaluate::Make(v);
}

Stmt IRMutator::MutateLetStmt(const LetStmt* op, const Stmt& self) {
  Expr v = Mutate(op->value);
  Stmt b = Mutate(op->body);
  return v.same_as(op->value) && b.same_as(op->body) ? self : LetStmt::Make(op->var, v, b);
}

Stmt IRMutator::MutateAllocate(const Allocate* op, const Stmt& self) {
  Stmt b = Mutate(op->body);
  return b.same_as(op->body) ? self : Allocate::Make(op->buffer, b);
}

}  // namespace cinn_like::ir
