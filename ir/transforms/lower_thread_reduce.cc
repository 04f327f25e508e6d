/// \file LowerThreadReduce: find reduction updates raced by threadIdx.x, give each thread a
/// private partial and combine the partials with one block-reduce intrinsic.
#include "ir/transforms/lower_thread_reduce.h"

#include "absl/strings/str_cat.h"
#include "ir/mutator.h"
#include "ir/transforms/reduce_update.h"

namespace cinn_like::ir {
namespace {

/// Rewrites a region's statement: the thread loop dissolves (it is hoisted by the caller), the
/// update accumulates into the partial, and guards independent of the region are collected.
class RegionRewriter : public PartialsRewriter {
 public:
  RegionRewriter(const ReduceRegion& region, Buffer partial)
      : PartialsRewriter(region, std::move(partial), Expr(0)) {}

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    if (op == region_.loop) return Mutate(op->body);
    return IRMutator::MutateFor(op, self);
  }
};

class ThreadReduceLowerer : public ReduceRegionMutator {
 public:
  absl::Status status;

 protected:
  /// The region's threadIdx.x loop.
  const For* PickLoop(const ReduceRegion& region, const std::vector<const For*>& loops) override {
    const Store* op = region.update;
    const For* thread = nullptr;
    for (const For* loop : loops) {
      if (loop->for_kind != ForKind::kGpuThread) continue;
      if (loop->bind_axis != 0) {
        Fail(absl::UnimplementedError(absl::StrCat(
            "reduction into ", op->buffer->name, ": its reduce loop ", loop->loop_var.name(),
            " is bound to threadIdx.", std::string(1, "xyz"[loop->bind_axis]),
            "; a cross-thread reduction must be bound to threadIdx.x")));
        return nullptr;
      }
      if (thread) {
        Fail(absl::UnimplementedError(absl::StrCat(
            "reduction into ", op->buffer->name, ": reduce loops ", thread->loop_var.name(),
            " and ", loop->loop_var.name(), " are both bound to threadIdx.x")));
        return nullptr;
      }
      thread = loop;
    }
    return thread;
  }

  void OnSharedRegion(const ReduceRegion& pending, const ReduceRegion& region) override {
    Fail(absl::UnimplementedError(absl::StrCat("reductions into ", pending.update->buffer->name,
                                               " and ", region.update->buffer->name,
                                               " share one cross-thread reduction region")));
  }

  Stmt RewriteRegion(const Stmt& top, const ReduceRegion& region) override {
    const Store* update = region.update;
    Type t = update->value.type();
    Buffer partial =
        MakeBuffer(update->buffer->name + "_partial", t, {Expr(1)}, MemoryScope::kLocal);
    RegionRewriter rewriter(region, partial);
    Stmt body = rewriter.Mutate(top);
    Expr p = Load::Make(partial, {Expr(0)});
    const For* thread = region.loop;
    // Every thread holds the combined value: a local X (each thread's own) is stored by every
    // thread, a shared or global one by thread 0.
    const bool every_thread = update->buffer->scope == MemoryScope::kLocal;
    Expr cond = every_thread ? Expr() : (thread->loop_var == Expr(0));
    for (auto& g : rewriter.outer_guards) cond = cond.defined() ? (cond && g) : g;
    Expr acc = Load::Make(update->buffer, update->indices);
    Stmt result = Block::Make(
        {Store::Make(partial, {Expr(0)}, ReduceInit(region.kind, t)), body,
         Store::Make(
             partial, {Expr(0)},
             Call::Make(t, CombinePartials(region.kind, PartialsAcross::kBlockThreads), {p})),
         cond.defined()
             ? IfThenElse::Make(cond, Store::Make(update->buffer, update->indices,
                                                  ReduceCombine(region.kind, acc, p)))
             : Store::Make(update->buffer, update->indices, ReduceCombine(region.kind, acc, p))});
    return For::Make(thread->loop_var, thread->min, thread->extent, ForKind::kGpuThread,
                     Allocate::Make(partial, result), thread->bind_axis);
  }

 private:
  void Fail(absl::Status s) {
    if (status.ok()) status = std::move(s);
  }
};

}  // namespace

absl::StatusOr<Stmt> LowerThreadReduce(const Stmt& s) {
  ThreadReduceLowerer lowerer;
  Stmt out = lowerer.Mutate(s);
  if (!lowerer.status.ok()) return lowerer.status;
  return out;
}

}  // namespace cinn_like::ir
