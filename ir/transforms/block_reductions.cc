/// \file BlockReductions: long float sums in blocks of partial sums.
#include "ir/transforms/block_reductions.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/mutator.h"
#include "ir/substitute.h"
#include "ir/tensor.h"
#include "ir/transforms/reduce_update.h"
#include "ir/transforms/simplify.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

/// Partials larger than this (elements of P) are not made: the loops inside the blocked loop
/// that index the accumulator would be more than a few vector registers.
constexpr int64_t kMaxPartials = 256;

/// The one store of a blocked loop's body and the path to it.
struct UpdatePath {
  const Store* update = nullptr;
  Expr value;                            // e of X[idx] + e
  std::vector<const For*> index_loops;   // loops whose variables occur in idx, outermost first
  std::vector<Expr> guards;              // conditions of the IfThenElse on the path
  std::set<const Variable*> inner_vars;  // every loop variable on the path
  int64_t inner_elements = 1;            // iterations of the path's other loops
  bool ok = true;
};

bool UsedIn(const std::vector<Expr>& indices, const Variable* v) {
  for (auto& e : indices) {
    if (UsesVar(e, v)) return true;
  }
  return false;
}

/// Walks a body made of loops, guards without else and one store.
void FindPath(const Stmt& s, UpdatePath* p, std::vector<const For*>* loops) {
  if (!p->ok) return;
  if (auto* f = s.As<For>()) {
    loops->push_back(f);
    FindPath(f->body, p, loops);
    return;
  }
  if (auto* i = s.As<IfThenElse>()) {
    if (i->else_case.defined()) {
      p->ok = false;
      return;
    }
    p->guards.push_back(i->cond);
    FindPath(i->then_case, p, loops);
    return;
  }
  if (auto* b = s.As<Block>(); b && b->stmts.size() == 1) {
    FindPath(b->stmts[0], p, loops);
    return;
  }
  auto* st = s.As<Store>();
  ReduceKind kind = ReduceKind::kNone;
  Expr e;
  if (!st || p->update || !MatchReduceUpdate(st, &kind, &e) || kind != ReduceKind::kSum ||
      !st->value.type().is_float() || !st->value.type().is_scalar() ||
      st->value.type().bits() > 32) {
    p->ok = false;
    return;
  }
  p->update = st;
  p->value = e;
  for (const For* f : *loops) {
    p->inner_vars.insert(f->loop_var.node());
    const int64_t* extent = AsConstInt(f->extent);
    if (UsedIn(st->indices, f->loop_var.node())) {
      if (!extent || f->for_kind == ForKind::kParallel) {
        p->ok = false;
        return;
      }
      p->index_loops.push_back(f);
    } else if (!extent) {
      p->ok = false;  // a symbolic loop inside: that loop is the one to block
      return;
    } else {
      p->inner_elements *= std::max<int64_t>(*extent, 1);
    }
  }
}

/// The update accumulates into `partials[index]` instead of X[idx].
class IntoPartials : public IRMutator {
 public:
  IntoPartials(const Store* update, Buffer partials, Expr index)
      : update_(update), partials_(std::move(partials)), index_(std::move(index)) {}

 protected:
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    if (op != update_) return self;
    ReduceKind kind;
    Expr e;
    MatchReduceUpdate(op, &kind, &e);
    Expr acc = Load::Make(partials_, {index_});
    return Store::Make(partials_, {index_}, acc + e);
  }

 private:
  const Store* update_;
  Buffer partials_;
  Expr index_;
};

/// `body` inside copies of `loops` (outermost first, same kinds), their variables renamed with
/// `suffix`.
Stmt Nest(const std::vector<const For*>& loops, Stmt body, const std::string& suffix) {
  VarMap rename;
  std::vector<Var> vars;
  for (const For* f : loops) {
    vars.emplace_back(f->loop_var.name() + suffix, f->loop_var.type());
    rename[f->loop_var.node()] = vars.back();
  }
  body = Substitute(body, rename);
  for (size_t i = loops.size(); i-- > 0;) {
    const For* f = loops[i];
    body = For::Make(vars[i], f->min, f->extent, f->for_kind, body);
  }
  return body;
}

/// Whether `e` divides or clamps (Div, Mod, Min, Max anywhere in it): a loop of such a symbolic
/// extent is a share of a split loop (a thread's part of a row), not a whole length.
bool Divides(const Expr& e) {
  struct Finder : IRVisitor {
    bool found = false;
    using IRVisitor::Visit;
    void VisitDiv(const Div*) override { found = true; }
    void VisitMod(const Mod*) override { found = true; }
    void VisitMin(const Min*) override { found = true; }
    void VisitMax(const Max*) override { found = true; }
  } f;
  f.Visit(e);
  return f.found;
}

Stmt TryBlock(const For* op, bool symbolic_shares) {
  if (op->for_kind != ForKind::kSerial) return Stmt();
  if (!symbolic_shares && AsConstInt(op->extent) == nullptr && Divides(op->extent)) return Stmt();
  UpdatePath p;
  std::vector<const For*> loops;
  FindPath(op->body, &p, &loops);
  if (!p.ok || !p.update) return Stmt();
  const Variable* k = op->loop_var.node();
  if (UsedIn(p.update->indices, k)) return Stmt();
  const int64_t* extent = AsConstInt(op->extent);
  const int64_t block = std::max<int64_t>(1, kReductionBlockElements / p.inner_elements);
  if (extent && *extent * p.inner_elements <= kReductionBlockElements) return Stmt();
  if (extent && *extent <= block) return Stmt();
  // P: one element per iteration of the index loops, row-major.
  int64_t size = 1;
  Expr index = IndexConst(0);
  for (const For* f : p.index_loops) {
    const int64_t n = *AsConstInt(f->extent);
    index = index * IndexConst(n) + (f->loop_var - f->min);
    size *= n;
  }
  if (size > kMaxPartials) return Stmt();
  index = Simplify(index);
  const Store* x = p.update;
  const Type t = x->value.type();

  const Type it = op->loop_var.type();
  Var kb(op->loop_var.name() + "_block", it);
  Var ki(op->loop_var.name() + "_in_block", it);
  Expr s_const = MakeConst(it, static_cast<double>(block));
  Expr blocks = Simplify(op->extent / s_const);
  std::set<const Variable*> varying = p.inner_vars;
  varying.insert(k);
  for (const For* f : p.index_loops) varying.erase(f->loop_var.node());
  std::vector<Expr> outer;
  for (auto& g : p.guards) AddGuardsFreeOf(g, varying, &outer);
  // Some of k's iterations summed apart, into a partial P named X<name> (`tag` renames the
  // index loops' copies): P = 0; the loop `loop` makes around the body accumulating into P;
  // X[idx] += P under the guards that hold for the whole loop.
  auto summed_apart = [&](const std::string& name, const std::string& tag,
                          const std::function<Stmt(Stmt)>& loop) {
    Buffer partials =
        MakeBuffer(x->buffer->name + name, t, {Expr(static_cast<int>(size))}, MemoryScope::kLocal);
    Stmt init = Nest(p.index_loops, Store::Make(partials, {index}, ReduceInit(ReduceKind::kSum, t)),
                     tag + "init");
    Stmt add = Store::Make(x->buffer, x->indices,
                           Load::Make(x->buffer, x->indices) + Load::Make(partials, {index}));
    if (!outer.empty()) {
      Expr cond = outer[0];
      for (size_t i = 1; i < outer.size(); ++i) cond = cond && outer[i];
      add = IfThenElse::Make(cond, add);
    }
    Stmt body = loop(IntoPartials(x, partials, index).Mutate(op->body));
    return Allocate::Make(partials,
                          Block::Make({init, body, Nest(p.index_loops, add, tag + "sum")}));
  };
  Stmt main = For::Make(kb, MakeConst(it, 0), blocks, ForKind::kSerial,
                        summed_apart("_block", "_b", [&](Stmt body) {
                          body = Substitute(body, {{k, Simplify(op->min + kb * s_const + ki)}});
                          return For::Make(ki, MakeConst(it, 0), s_const, ForKind::kSerial, body);
                        }));
  Expr done = Simplify(blocks * s_const);
  Expr rest = Simplify(op->extent - done);
  if (IsConstInt(rest, 0)) return main;
  // The rest, fewer than S iterations, is summed apart too: added one by one into X, its
  // elements were lost once X passed 2^24 (a sum of 2^24 + 3 ones gave 2^24).
  Stmt tail = summed_apart("_tail", "_t", [&](Stmt body) {
    return For::Make(op->loop_var, Simplify(op->min + done), rest, ForKind::kSerial, body);
  });
  return Block::Make({main, tail});
}

class Blocker : public IRMutator {
 public:
  explicit Blocker(bool symbolic_shares) : symbolic_shares_(symbolic_shares) {}

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Stmt s = IRMutator::MutateFor(op, self);
    auto* f = s.As<For>();
    if (!f) return s;
    Stmt blocked = TryBlock(f, symbolic_shares_);
    return blocked.defined() ? blocked : s;
  }

 private:
  bool symbolic_shares_;
};

}  // namespace

Stmt BlockReductions(const Stmt& s, bool symbolic_shares) {
  return Blocker(symbolic_shares).Mutate(s);
}

}  // namespace cinn_like::ir
