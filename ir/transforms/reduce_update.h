/// \file Recognizing the reduction updates lowering emits and the loop regions around them,
/// for the passes that rewrite them (LowerThreadReduce, VectorizeReductions).
#pragma once

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "ir/intrinsics.h"
#include "ir/ir.h"
#include "ir/mutator.h"
#include "ir/tensor.h"

namespace cinn_like::ir {

/// True when `op` is `X[idx] = combine(X[idx], e)` with combine `+` (either operand order),
/// max, min or `*`, the two idx structurally equal; sets the kind and e.
bool MatchReduceUpdate(const Store* op, ReduceKind* kind, Expr* e);

/// Adds to `out` the conjuncts of `cond` (split at &&) that use none of `vars`, once each
/// (structurally equal conjuncts count once).
void AddGuardsFreeOf(const Expr& cond, const std::set<const Variable*>& vars,
                     std::vector<Expr>* out);

/// Where a reduction's partial results are combined: across the threads of a block
/// (LowerThreadReduce) or across the lanes of a vector (VectorizeReductions).
enum class PartialsAcross : uint8_t { kBlockThreads, kVectorLanes };
/// The intrinsic that combines partials of `kind` (sum, max, min, prod) across `across`.
IntrinsicOp CombinePartials(ReduceKind kind, PartialsAcross across);

/// A reduction update and its region: the longest innermost run of enclosing loops whose
/// variables do not occur in the update's indices, cut at the Allocate of the updated buffer
/// when that lies inside a loop (a stage computed at it is reduced only within it).
struct ReduceRegion {
  const For* top = nullptr;   // outermost loop of the region
  const For* loop = nullptr;  // the loop of the region the pass rewrites
  const Store* update = nullptr;
  ReduceKind kind = ReduceKind::kNone;
  Expr value;                           // e of combine(X[idx], e)
  std::set<const Variable*> loop_vars;  // of the region's loops
};

/// The walk the reduce-rewrite passes share. It keeps the enclosing loops, finds each
/// reduction update's region, lets the pass pick the region's loop it rewrites, and at the
/// region's outermost loop hands the region's statement to the pass. One region is pending
/// at a time.
class ReduceRegionMutator : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  /// The loop of `loops` (the region's, outermost first) that the pass rewrites, or null to
  /// leave the update as it is.
  virtual const For* PickLoop(const ReduceRegion& region, const std::vector<const For*>& loops) = 0;
  /// Called instead of recording `region` when the region `pending` (around it) is recorded.
  virtual void OnSharedRegion(const ReduceRegion& /*pending*/, const ReduceRegion& /*region*/) {}
  /// The replacement of `top`, the statement of the region's outermost loop.
  virtual Stmt RewriteRegion(const Stmt& top, const ReduceRegion& region) = 0;

  Stmt MutateFor(const For* op, const Stmt& self) override;
  Stmt MutateAllocate(const Allocate* op, const Stmt& self) override;
  Stmt MutateStore(const Store* op, const Stmt& self) override;

 private:
  std::vector<const For*> loops_;
  std::map<const BufferNode*, size_t> alloc_depth_;  // loops enclosing each Allocate
  ReduceRegion pending_;
};

/// The base of the passes' rewriters of one region's statement: the update accumulates into
/// `partials[index]` instead of X[idx], and the conjuncts of the region's guards that do not
/// depend on the region's loops are collected into `outer_guards`.
class PartialsRewriter : public IRMutator {
 public:
  PartialsRewriter(const ReduceRegion& region, Buffer partials, Expr index)
      : region_(region), partials_(std::move(partials)), index_(std::move(index)) {}
  using IRMutator::Mutate;
  std::vector<Expr> outer_guards;

 protected:
  Stmt MutateStore(const Store* op, const Stmt& self) override;
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override;
  const ReduceRegion& region_;

 private:
  Buffer partials_;
  Expr index_;
};

}  // namespace cinn_like::ir
