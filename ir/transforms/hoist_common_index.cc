/// \file HoistCommonIndex: loop-invariant and repeated index subterms become LetStmts.
#include "ir/transforms/hoist_common_index.h"

#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/mutator.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

/// Variables bound (by loops or lets) inside a statement.
std::set<const Variable*> BoundInside(const Stmt& s) {
  struct Finder : IRVisitor {
    using IRVisitor::Visit;
    std::set<const Variable*> found;
    void VisitFor(const For* op) override {
      found.insert(op->loop_var.node());
      IRVisitor::VisitFor(op);
    }
    void VisitLetStmt(const LetStmt* op) override {
      found.insert(op->var.node());
      IRVisitor::VisitLetStmt(op);
    }
  } f;
  f.Visit(s);
  return f.found;
}

/// What a subterm may be made of, and whether it is worth a name.
struct Shape {
  bool hoistable = true;  // integer arithmetic only: no loads, calls, vectors, risky division
  bool costly = false;    // holds a *, / or %
  std::set<const Variable*> vars;
};

Shape ShapeOf(const Expr& e) {
  Shape s;
  if (!e.type().is_integer() || !e.type().is_scalar()) {
    s.hoistable = false;
    return s;
  }
  if (AsConstInt(e)) return s;
  if (auto* v = e.As<Variable>()) {
    s.vars.insert(v);
    return s;
  }
  const BinaryNode* op = nullptr;
  switch (e.kind()) {
    case IrNodeKind::kAdd:
      op = e.As<Add>();
      break;
    case IrNodeKind::kSub:
      op = e.As<Sub>();
      break;
    case IrNodeKind::kMin:
      op = e.As<Min>();
      break;
    case IrNodeKind::kMax:
      op = e.As<Max>();
      break;
    case IrNodeKind::kMul:
      op = e.As<Mul>();
      s.costly = true;
      break;
    case IrNodeKind::kDiv:
    case IrNodeKind::kMod: {
      op = static_cast<const BinaryNode*>(e.get());
      const int64_t* d = AsConstInt(op->b);
      s.costly = true;
      s.hoistable = d && *d != 0;  // evaluated even when the loop runs no iteration
      break;
    }
    default:
      s.hoistable = false;
      return s;
  }
  for (const Expr& x : {op->a, op->b}) {
    Shape c = ShapeOf(x);
    s.hoistable &= c.hoistable;
    s.costly |= c.costly;
    s.vars.insert(c.vars.begin(), c.vars.end());
  }
  return s;
}

/// The largest subterms of the indices and guards of a statement that satisfy `take`, with
/// how often each occurs (structurally).
class SubtermCollector : public IRVisitor {
 public:
  using Predicate = std::function<bool(const Shape&)>;
  explicit SubtermCollector(Predicate take) : take_(std::move(take)) {}
  using IRVisitor::Visit;
  std::vector<std::pair<Expr, int>> found;

 protected:
  void VisitLoad(const Load* op) override {
    for (auto& i : op->indices) Collect(i);
  }
  void VisitStore(const Store* op) override {
    for (auto& i : op->indices) Collect(i);
    Visit(op->value);
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    Collect(op->cond);
    Visit(op->then_case);
    Visit(op->else_case);
  }

 private:
  void Collect(const Expr& e) {
    // A constant offset is free in an address: x * 8 + 1 and x * 8 + 2 share x * 8.
    if (auto* add = e.As<Add>(); add && AsConstInt(add->b)) return Collect(add->a);
    Shape s = ShapeOf(e);
    if (s.hoistable && s.costly && take_(s)) {
      for (auto& [f, count] : found) {
        if (StructuralEqual(f, e)) {
          ++count;
          return;
        }
      }
      found.push_back({e, 1});
      return;
    }
    // Children (through ramps, comparisons, loads nested in indices).
    if (auto* r = e.As<Ramp>()) return Collect(r->base);
    if (auto* l = e.As<Load>()) return VisitLoad(l);
    switch (e.kind()) {
#define CINN_LIKE_COLLECT_BINARY(name, sym) \
  case IrNodeKind::k##name:                 \
    Collect(e.As<name>()->a);               \
    Collect(e.As<name>()->b);               \
    return;
      CINN_LIKE_BINARY_NODES(CINN_LIKE_COLLECT_BINARY)
#undef CINN_LIKE_COLLECT_BINARY
      default:
        return;
    }
  }
  Predicate take_;
};

/// Replaces every occurrence of the given subterms by their variables.
class Replacer : public IRMutator {
 public:
  explicit Replacer(const std::vector<std::pair<Expr, Var>>& names) : names_(names) {}
  using IRMutator::Mutate;
  Expr Mutate(const Expr& e) override {
    if (!e.defined()) return e;
    for (auto& [term, var] : names_) {
      if (StructuralEqual(term, e)) return var;
    }
    return IRMutator::Mutate(e);
  }

 private:
  const std::vector<std::pair<Expr, Var>>& names_;
};

class Hoister : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    std::set<const Variable*> inside = BoundInside(op->body);
    const Variable* v = op->loop_var.node();
    auto free_of_inside = [&](const Shape& s) {
      for (const Variable* x : s.vars) {
        if (inside.count(x)) return false;
      }
      return true;
    };
    // Invariant in L: hoisted out of it (only from a loop inside another one, so that the
    // let stays inside the loop nest, where kernels and parallel bodies begin).
    std::vector<std::pair<Expr, Var>> outside;
    if (depth_ > 0) {
      SubtermCollector invariant(
          [&](const Shape& s) { return !s.vars.count(v) && free_of_inside(s); });
      invariant.Visit(op->body);
      for (auto& [e, count] : invariant.found) outside.push_back({e, Fresh(e.type())});
    }
    Stmt body = Replacer(outside).Mutate(op->body);
    // Depends on L only, and repeated: named once per iteration.
    SubtermCollector common([&](const Shape& s) { return s.vars.count(v) && free_of_inside(s); });
    common.Visit(body);
    std::vector<std::pair<Expr, Var>> per_iteration;
    for (auto& [e, count] : common.found) {
      if (count >= 2) per_iteration.push_back({e, Fresh(e.type())});
    }
    body = Replacer(per_iteration).Mutate(body);
    ++depth_;
    body = Mutate(body);
    --depth_;
    for (auto it = per_iteration.rbegin(); it != per_iteration.rend(); ++it) {
      body = LetStmt::Make(it->second, it->first, body);
    }
    if (outside.empty() && per_iteration.empty() && body.same_as(op->body)) return self;
    Stmt loop = For::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->bind_axis);
    for (auto it = outside.rbegin(); it != outside.rend(); ++it) {
      loop = LetStmt::Make(it->second, it->first, loop);
    }
    return loop;
  }

 private:
  Var Fresh(Type t) { return Var(absl::StrCat("idx", count_++), t); }
  int depth_ = 0;
  int count_ = 0;
};

}  // namespace

Stmt HoistCommonIndex(const Stmt& s) { return Hoister().Mutate(s); }

}  // namespace cinn_like::ir
