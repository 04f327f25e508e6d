/// \file Matching reduction updates and finding their regions.
#include "ir/transforms/reduce_update.h"

#include <algorithm>

#include "ir/math.h"
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

/// The position in `loops` (outermost first) of the outermost loop of the update's region:
/// loops.size() when the innermost loop's variable occurs in the update's indices.
size_t RegionStart(const std::vector<const For*>& loops, const Store* update) {
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

}  // namespace

IntrinsicOp CombinePartials(ReduceKind kind, PartialsAcross across) {
  const bool block = across == PartialsAcross::kBlockThreads;
  switch (kind) {
    case ReduceKind::kSum:
      return block ? IntrinsicOp::kBlockReduceSum : IntrinsicOp::kVectorReduceSum;
    case ReduceKind::kMax:
      return block ? IntrinsicOp::kBlockReduceMax : IntrinsicOp::kVectorReduceMax;
    case ReduceKind::kProd:
      return block ? IntrinsicOp::kBlockReduceProd : IntrinsicOp::kVectorReduceProd;
    default:
      return block ? IntrinsicOp::kBlockReduceMin : IntrinsicOp::kVectorReduceMin;
  }
}

bool MatchReduceUpdate(const Store* op, ReduceKind* kind, Expr* e) {
  auto is_acc = [&](const Expr& x) {
    auto* load = x.As<Load>();
    return load && load->buffer == op->buffer && StructuralEqual(load->indices, op->indices);
  };
  // The update acc = combine(acc, e) or combine(e, acc) of kind k, its operands `x` and `y`.
  auto take = [&](const Expr& x, const Expr& y, ReduceKind k) {
    if (is_acc(x)) {
      *e = y;
    } else if (is_acc(y)) {
      *e = x;
    } else {
      return false;
    }
    *kind = k;
    return true;
  };
  auto match = [&](const BinaryNode* b, ReduceKind k) { return b && take(b->a, b->b, k); };
  // A float max or min combines with the math call maximum or minimum (ReduceCombine).
  auto match_call = [&](MathOp math, ReduceKind k) {
    auto* call = op->value.As<Call>();
    return call && call->call_kind == Call::CallKind::kPure && call->args.size() == 2 &&
           call->name == GetMathOpInfo(math).name && take(call->args[0], call->args[1], k);
  };
  return match(op->value.As<Add>(), ReduceKind::kSum) ||
         match(op->value.As<Max>(), ReduceKind::kMax) ||
         match(op->value.As<Min>(), ReduceKind::kMin) ||
         match(op->value.As<Mul>(), ReduceKind::kProd) ||
         match_call(MathOp::kMaximum, ReduceKind::kMax) ||
         match_call(MathOp::kMinimum, ReduceKind::kMin);
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

Stmt ReduceRegionMutator::MutateFor(const For* op, const Stmt& self) {
  loops_.push_back(op);
  Stmt body = Mutate(op->body);
  loops_.pop_back();
  if (pending_.top == op) {
    Stmt out = RewriteRegion(self, pending_);
    pending_ = ReduceRegion();
    return out;
  }
  if (body.same_as(op->body)) return self;
  return For::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->bind_axis);
}

Stmt ReduceRegionMutator::MutateAllocate(const Allocate* op, const Stmt& self) {
  alloc_depth_[op->buffer.get()] = loops_.size();
  return IRMutator::MutateAllocate(op, self);
}

Stmt ReduceRegionMutator::MutateStore(const Store* op, const Stmt& self) {
  ReduceRegion region;
  if (!MatchReduceUpdate(op, &region.kind, &region.value)) return self;
  size_t r = RegionStart(loops_, op);
  auto alloc = alloc_depth_.find(op->buffer.get());
  if (alloc != alloc_depth_.end()) r = std::max(r, alloc->second);
  std::vector<const For*> loops(loops_.begin() + r, loops_.end());
  for (const For* loop : loops) region.loop_vars.insert(loop->loop_var.node());
  region.update = op;
  region.loop = PickLoop(region, loops);
  if (!region.loop) return self;
  if (pending_.top) {
    OnSharedRegion(pending_, region);
    return self;
  }
  region.top = loops.front();
  pending_ = region;
  return self;
}

Stmt PartialsRewriter::MutateStore(const Store* op, const Stmt& self) {
  if (op != region_.update) return self;
  Expr acc = Load::Make(partials_, {index_});
  return Store::Make(partials_, {index_}, ReduceCombine(region_.kind, acc, region_.value));
}

Stmt PartialsRewriter::MutateIfThenElse(const IfThenElse* op, const Stmt& self) {
  AddGuardsFreeOf(op->cond, region_.loop_vars, &outer_guards);
  return IRMutator::MutateIfThenElse(op, self);
}

}  // namespace cinn_like::ir
