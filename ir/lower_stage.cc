/// \file Building a stage's loop nest from its leaves and relations, with the nests of the
/// stages computed at its loops.
#include "ir/lower_stage.h"

#include "absl/strings/str_cat.h"
#include "ir/mutator.h"
#include "ir/schedule_axes.h"
#include "ir/schedule_region.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace cinn_like::ir {
namespace {

Stmt WrapGuards(const std::vector<Expr>& guards, Stmt body) {
  if (guards.empty()) return body;
  Expr cond = guards[0];
  for (size_t i = 1; i < guards.size(); ++i) cond = cond && guards[i];
  return IfThenElse::Make(cond, std::move(body));
}

Stmt WrapLoop(const Stage::Axis& a, Stmt body) {
  return For::Make(a.var, 0, a.extent, a.kind, std::move(body), a.bind_axis);
}

/// Loads of stages computed at this one read their region buffers, rebased to the origin.
class RebaseAttached : public IRMutator {
 public:
  /// The stages computed at `consumer`'s loops, and at the loops of the stages it is itself
  /// computed at (siblings computed at the same loop may read each other).
  explicit RebaseAttached(const Stage& consumer) {
    for (const Stage* s = &consumer; s; s = s->attach() ? s->attach()->consumer : nullptr) {
      for (int leaf : s->leaves()) {
        const Stage::Axis& a = s->axes()[leaf];
        if (a.kind == ForKind::kGpuThread) thread_of_[a.var.node()] = ThreadIndexExpr(a.bind_axis);
        for (const Stage* p : s->AttachedAt(a.var)) {
          // A stage in its own buffer is read there at the tensor's indices, as stored.
          if (p != &consumer && !p->attach()->own_buffer) producers_[p->tensor()->buffer.get()] = p;
        }
      }
    }
  }
  using IRMutator::Mutate;

 protected:
  Expr MutateLoad(const Load* op, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = MutateAll(op->indices, &idx);
    auto it = producers_.find(op->buffer.get());
    if (it == producers_.end()) return changed ? Load::Make(op->buffer, idx) : self;
    const Stage::Attach& at = *it->second->attach();
    // A thread-private region (Stage::ComputeAt) names the thread indices by thread_index in
    // its origin, so the loads' loop variables bound to them are written the same way.
    const bool per_thread = at.thread_private && !thread_of_.empty();
    for (size_t d = 0; d < idx.size(); ++d) {
      AffineForm offset = per_thread ? Subtract(Linearize(Substitute(idx[d], thread_of_)),
                                                Linearize(Substitute(at.min[d], thread_of_)))
                                     : Subtract(Linearize(idx[d]), Linearize(at.min[d]));
      if (at.stride[d] != 1) {
        for (auto& t : offset.terms) t.coeff /= at.stride[d];  // exact by construction
        offset.constant /= at.stride[d];
      }
      idx[d] = ToExpr(offset);
    }
    return Load::Make(at.buffer, idx);
  }

 private:
  std::unordered_map<const BufferNode*, const Stage*> producers_;
  VarMap thread_of_;  // the thread-bound loops of the stage and those it is computed at
};

/// Puts the nests of the stages computed at `axis` (a leaf of `stage`) before `body`.
absl::StatusOr<Stmt> PlaceAttached(const Stage& stage, const Stage::Axis& axis, Stmt body) {
  std::vector<const Stage*> attached = stage.AttachedAt(axis.var);
  if (attached.empty()) return body;
  Stage::Signature signature = stage.LoopSignature();
  std::vector<Stmt> seq;
  for (const Stage* p : attached) {
    if (p->attach()->signature != signature) {
      return absl::InvalidArgumentError(
          absl::StrCat("stage ", stage.tensor().name(), "'s loops changed after stage ",
                       p->tensor().name(), " was computed at its loop ", axis.var.name(),
                       "; schedule the consumer's loops before compute_at"));
    }
    auto nest = LowerStage(*p);
    if (!nest.ok()) return nest.status();
    seq.push_back(*nest);
  }
  seq.push_back(body);
  Stmt out = Block::Make(seq);
  for (auto it = attached.rbegin(); it != attached.rend(); ++it) {
    if (!(*it)->attach()->own_buffer) out = Allocate::Make((*it)->attach()->buffer, out);
  }
  return out;
}

/// Whether `cond` is a conjunction of comparisons of integer expressions without loads.
bool IsIndexComparison(const Expr& cond) {
  if (const And* a = cond.As<And>()) return IsIndexComparison(a->a) && IsIndexComparison(a->b);
  const BinaryNode* cmp = nullptr;
  if (!(cmp = cond.As<LT>()) && !(cmp = cond.As<LE>()) && !(cmp = cond.As<GT>()) &&
      !(cmp = cond.As<GE>())) {
    return false;
  }
  return !ReadsBuffer(cond) && cmp->a.type().is_integer() && cmp->b.type().is_integer();
}

}  // namespace

absl::StatusOr<Stmt> LowerStage(const Stage& stage) {
  const auto& axes = stage.axes();
  const TensorNode& t = *stage.tensor().operator->();
  std::vector<Expr> value = AxisValues(stage);
  for (int a = 0; a < stage.num_root_axes(); ++a) {
    if (!value[a].defined()) {
      return absl::InternalError(absl::StrCat("stage ", t.name, ": axis ", axes[a].var.name(),
                                              " has no value after scheduling"));
    }
  }
  std::vector<Expr> spatial_guards, reduce_guards;
  for (auto it = stage.relations().rbegin(); it != stage.relations().rend(); ++it) {
    const Stage::Relation& r = *it;
    if (r.kind != Stage::Relation::Kind::kSplit || r.exact) continue;
    Expr guard = value[r.parent] < axes[r.parent].extent;
    (axes[r.parent].is_reduce ? reduce_guards : spatial_guards).push_back(guard);
  }
  VarMap root_values = BodyRootValues(stage, value);
  const Stage::Attach* at = stage.attach();
  std::vector<Expr> index;
  for (int d = 0; d < stage.rank(); ++d) {
    // A region buffer is indexed from the region's origin; the tensor's own at its indices.
    index.push_back(at && at->own_buffer ? root_values[axes[d].var.node()] : value[d]);
    if (at && at->guard) spatial_guards.push_back(root_values[axes[d].var.node()] < t.shape[d]);
  }
  Expr element = RebaseAttached(stage).Mutate(Substitute(stage.InlinedBody(), root_values));
  Buffer out = stage.store_buffer();
  if (stage.fold_buffer()) {
    VarMap fold = root_values;
    fold[stage.fold_placeholder().node()] = element;
    element = Substitute(stage.fold_value(), fold);
  }
  const auto& leaves = stage.leaves();

  if (stage.reduce() == ReduceKind::kNone) {
    Stmt body = WrapGuards(spatial_guards, Store::Make(out, index, element));
    for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) {
      auto placed = PlaceAttached(stage, axes[*it], body);
      if (!placed.ok()) return placed.status();
      body = WrapLoop(axes[*it], *placed);
    }
    return body;
  }

  size_t first_reduce = leaves.size();
  for (size_t p = 0; p < leaves.size(); ++p) {
    if (axes[leaves[p]].is_reduce) {
      first_reduce = p;
      break;
    }
  }
  std::vector<Expr> all_guards = spatial_guards;
  all_guards.insert(all_guards.end(), reduce_guards.begin(), reduce_guards.end());
  // A term that is the reduction's identity unless a condition holds (rfactor's partial chunk
  // of a split with a tail: select(k < extent, x[k], 0)) is that condition guarding the update:
  // loop partitioning can then take it off the loop's main part, and no load waits on it.
  // Only a comparison of indices (a tail), not a condition on data (a NaN check, a mask),
  // which would stop vectorization of the loop.
  if (const Select* sel = element.As<Select>()) {
    if (StructuralEqual(sel->false_value, ReduceInit(stage.reduce(), t.dtype)) &&
        sel->cond.type().is_scalar() && IsIndexComparison(sel->cond)) {
      all_guards.push_back(sel->cond);
      element = sel->true_value;
    }
  }
  Expr acc = Load::Make(out, index);
  Stmt update =
      WrapGuards(all_guards, Store::Make(out, index, ReduceCombine(stage.reduce(), acc, element)));
  Stmt init =
      WrapGuards(spatial_guards, Store::Make(out, index, ReduceInit(stage.reduce(), t.dtype)));
  for (size_t p = leaves.size(); p-- > first_reduce;) {
    auto placed = PlaceAttached(stage, axes[leaves[p]], update);
    if (!placed.ok()) return placed.status();
    update = WrapLoop(axes[leaves[p]], *placed);
    if (!axes[leaves[p]].is_reduce) init = WrapLoop(axes[leaves[p]], init);
  }
  Stmt body = Block::Make({init, update});
  for (size_t p = first_reduce; p-- > 0;) {
    auto placed = PlaceAttached(stage, axes[leaves[p]], body);
    if (!placed.ok()) return placed.status();
    body = WrapLoop(axes[leaves[p]], *placed);
  }
  return body;
}

}  // namespace cinn_like::ir
