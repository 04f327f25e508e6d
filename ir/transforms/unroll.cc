/// \file The unroll pass.
#include "ir/transforms/unroll.h"

#include <glog/logging.h>

#include <vector>

#include "ir/mutator.h"
#include "ir/substitute.h"
#include "ir/transforms/linear_form.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

constexpr int64_t kMaxUnroll = 512;
/// Unrolled loops up to this many iterations are versioned on their tail guards (below).
constexpr int64_t kMaxVersioned = 64;

/// The condition under which every guard of `body` that depends on `v` holds for every v in
/// [min, min + count): those guards are ifs (the tails of splits of symbolic extents, with the
/// conditions of the loops around: a row past the end; the vectorizer's choice between a
/// vector and its scalar lanes) whose conjuncts use no loop inside `body`, those on v affine.
/// Undefined when there is no such guard or one is of another form.
Expr TailCondition(const Stmt& body, const Variable* v, const Expr& min, int64_t count) {
  struct Finder : IRVisitor {
    using IRVisitor::Visit;
    const Variable* v = nullptr;
    std::vector<const Variable*> inner;
    std::vector<Expr> conjuncts;
    bool ok = true;
    void VisitFor(const For* op) override {
      inner.push_back(op->loop_var.node());
      IRVisitor::VisitFor(op);
      inner.pop_back();
    }
    void VisitIfThenElse(const IfThenElse* op) override {
      if (UsesVar(op->cond, v)) {
        for (const Expr& c : SplitConjunction(op->cond)) {
          for (const Variable* i : inner) ok &= !UsesVar(c, i);
          conjuncts.push_back(c);
        }
        Visit(op->then_case);  // the else case is not in the copy where the guards hold
        return;
      }
      IRVisitor::VisitIfThenElse(op);
    }
  } f;
  f.v = v;
  f.Visit(body);
  if (!f.ok || f.conjuncts.empty()) return Expr();
  return HoldsForEveryValue(JoinConjunction(f.conjuncts), v, min, count);
}

/// `body` with the guards TailCondition read (ifs whose condition depends on `v`) replaced by
/// their then-cases: where that condition holds, they all do.
class DropGuardsOn : public IRMutator {
 public:
  explicit DropGuardsOn(const Variable* v) : v_(v) {}
  using IRMutator::Mutate;

 protected:
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    if (!UsesVar(op->cond, v_)) return IRMutator::MutateIfThenElse(op, self);
    return Mutate(op->then_case);
  }

 private:
  const Variable* v_;
};

class Unroller : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (op->for_kind != ForKind::kUnrolled) {
      if (body.same_as(op->body)) return self;
      return For::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->bind_axis);
    }
    const int64_t* ext = AsConstInt(op->extent);
    if (!ext || *ext > kMaxUnroll) {
      LOG(WARNING) << "loop " << op->loop_var.name()
                   << " is marked unroll but its extent is not a constant up to " << kMaxUnroll
                   << "; it stays a serial loop";
      return For::Make(op->loop_var, op->min, op->extent, ForKind::kSerial, body);
    }
    auto unrolled = [&](const Stmt& b) {
      std::vector<Stmt> copies;
      for (int64_t k = 0; k < *ext; ++k) {
        Expr value = op->min + IndexConst(k);
        copies.push_back(Substitute(b, {{op->loop_var.node(), value}}));
      }
      return Block::Make(copies);
    };
    // Guards of a split's tail inside (a row of symbolic length held in registers): one test
    // of the last iteration picks a copy without them, else every copy tests its own.
    const Expr tail =
        *ext <= kMaxVersioned ? TailCondition(body, op->loop_var.node(), op->min, *ext) : Expr();
    if (tail.defined()) {
      return IfThenElse::Make(tail, unrolled(DropGuardsOn(op->loop_var.node()).Mutate(body)),
                              unrolled(body));
    }
    return unrolled(body);
  }
};

}  // namespace

Stmt UnrollLoops(const Stmt& s) { return Unroller().Mutate(s); }

}  // namespace cinn_like::ir
