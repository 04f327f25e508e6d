/// \file LowerThreadReduce: find reduction updates raced by threadIdx.x, give each thread a
/// private partial and combine the partials with one block-reduce intrinsic.
#include "ir/transforms/lower_thread_reduce.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/mutator.h"
#include "ir/transforms/reduce_update.h"

namespace cinn_like::ir {
namespace {

IntrinsicOp IntrinsicOf(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return IntrinsicOp::kBlockReduceSum;
    case ReduceKind::kMax:
      return IntrinsicOp::kBlockReduceMax;
    case ReduceKind::kProd:
      return IntrinsicOp::kBlockReduceProd;
    default:
      return IntrinsicOp::kBlockReduceMin;
  }
}

/// One reduction update raced by a thread loop, and the region around it.
struct Region {
  const For* top = nullptr;     // outermost loop of the region
  const For* thread = nullptr;  // the threadIdx.x loop inside it
  const Store* update = nullptr;
  ReduceKind kind = ReduceKind::kNone;
  Expr value;                           // e of combine(X[idx], e)
  std::set<const Variable*> loop_vars;  // of the region's loops
};

/// Rewrites a region's statement: the thread loop dissolves (it is hoisted by the caller), the
/// update accumulates into the partial, and guards independent of the region are collected.
class RegionRewriter : public IRMutator {
 public:
  RegionRewriter(const Region& region, Buffer partial)
      : region_(region), partial_(std::move(partial)) {}
  using IRMutator::Mutate;
  std::vector<Expr> outer_guards;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    if (op == region_.thread) return Mutate(op->body);
    return IRMutator::MutateFor(op, self);
  }
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    if (op != region_.update) return self;
    Expr acc = Load::Make(partial_, {Expr(0)});
    return Store::Make(partial_, {Expr(0)}, ReduceCombine(region_.kind, acc, region_.value));
  }
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    AddGuardsFreeOf(op->cond, region_.loop_vars, &outer_guards);
    return IRMutator::MutateIfThenElse(op, self);
  }

 private:
  const Region& region_;
  Buffer partial_;
};

class ThreadReduceLowerer : public IRMutator {
 public:
  using IRMutator::Mutate;
  absl::Status status;

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

  Stmt MutateAllocate(const Allocate* op, const Stmt& self) override {
    alloc_depth_[op->buffer.get()] = loops_.size();
    return IRMutator::MutateAllocate(op, self);
  }

  Stmt MutateStore(const Store* op, const Stmt& self) override {
    Region region;
    if (!MatchReduceUpdate(op, &region.kind, &region.value)) return self;
    size_t r = ReductionRegionStart(loops_, op);
    // A buffer allocated inside a loop (a stage computed at it) is reduced only within it.
    auto alloc = alloc_depth_.find(op->buffer.get());
    if (alloc != alloc_depth_.end()) r = std::max(r, alloc->second);
    for (size_t k = r; k < loops_.size(); ++k) {
      const For* loop = loops_[k];
      region.loop_vars.insert(loop->loop_var.node());
      if (loop->for_kind != ForKind::kGpuThread) continue;
      if (loop->bind_axis != 0) {
        Fail(absl::UnimplementedError(absl::StrCat(
            "reduction into ", op->buffer->name, ": its reduce loop ", loop->loop_var.name(),
            " is bound to threadIdx.", std::string(1, "xyz"[loop->bind_axis]),
            "; a cross-thread reduction must be bound to threadIdx.x")));
        return self;
      }
      if (region.thread) {
        Fail(absl::UnimplementedError(absl::StrCat(
            "reduction into ", op->buffer->name, ": reduce loops ", region.thread->loop_var.name(),
            " and ", loop->loop_var.name(), " are both bound to threadIdx.x")));
        return self;
      }
      region.thread = loop;
    }
    if (!region.thread) return self;
    if (pending_.top) {
      Fail(absl::UnimplementedError(absl::StrCat("reductions into ", pending_.update->buffer->name,
                                                 " and ", op->buffer->name,
                                                 " share one cross-thread reduction region")));
      return self;
    }
    region.top = loops_[r];
    region.update = op;
    pending_ = region;
    return self;
  }

 private:
  Stmt Rewrite(const Stmt& top) {
    const Store* update = pending_.update;
    Type t = update->value.type();
    Buffer partial =
        MakeBuffer(update->buffer->name + "_partial", t, {Expr(1)}, MemoryScope::kLocal);
    RegionRewriter rewriter(pending_, partial);
    Stmt body = rewriter.Mutate(top);
    Expr p = Load::Make(partial, {Expr(0)});
    const For* thread = pending_.thread;
    Expr cond = thread->loop_var == Expr(0);
    for (auto& g : rewriter.outer_guards) cond = cond && g;
    Expr acc = Load::Make(update->buffer, update->indices);
    Stmt result = Block::Make(
        {Store::Make(partial, {Expr(0)}, ReduceInit(pending_.kind, t)), body,
         Store::Make(partial, {Expr(0)}, Call::Make(t, IntrinsicOf(pending_.kind), {p})),
         IfThenElse::Make(cond, Store::Make(update->buffer, update->indices,
                                            ReduceCombine(pending_.kind, acc, p)))});
    return For::Make(thread->loop_var, thread->min, thread->extent, ForKind::kGpuThread,
                     Allocate::Make(partial, result), thread->bind_axis);
  }

  void Fail(absl::Status s) {
    if (status.ok()) status = std::move(s);
  }

  std::vector<const For*> loops_;
  std::map<const BufferNode*, size_t> alloc_depth_;  // loops enclosing each Allocate
  Region pending_;
};

}  // namespace

absl::StatusOr<Stmt> LowerThreadReduce(const Stmt& s) {
  ThreadReduceLowerer lowerer;
  Stmt out = lowerer.Mutate(s);
  if (!lowerer.status.ok()) return lowerer.status;
  return out;
}

}  // namespace cinn_like::ir
