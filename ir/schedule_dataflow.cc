/// \file The schedule primitives that move computation between stages: compute_inline,
/// reverse_compute_inline, compute_at, storage_align, cache_read and cache_write.
#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/schedule.h"
#include "ir/schedule_axes.h"
#include "ir/schedule_region.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

/// The index lists of every load of `buffer` in `e`.
std::vector<std::vector<Expr>> LoadsOf(const Expr& e, const BufferNode* buffer) {
  struct Finder : IRVisitor {
    const BufferNode* buffer;
    std::vector<std::vector<Expr>> found;
    using IRVisitor::Visit;
    void VisitLoad(const Load* op) override {
      if (op->buffer.get() == buffer) found.push_back(op->indices);
      IRVisitor::VisitLoad(op);
    }
  } f;
  f.buffer = buffer;
  f.Visit(e);
  return f.found;
}

/// Loads of `from` become loads of `to` (same indices), or `value` when `to` is null.
class ReplaceLoads : public IRMutator {
 public:
  ReplaceLoads(const BufferNode* from, Buffer to, Expr value = Expr())
      : from_(from), to_(std::move(to)), value_(std::move(value)) {}
  using IRMutator::Mutate;

 protected:
  Expr MutateLoad(const Load* op, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = MutateAll(op->indices, &idx);
    if (op->buffer.get() == from_) return to_ ? Load::Make(to_, idx) : value_;
    return changed ? Load::Make(op->buffer, idx) : self;
  }

 private:
  const BufferNode* from_;
  Buffer to_;
  Expr value_;
};

/// Loads of inlined stages become their bodies at the loaded indices.
class Inliner : public IRMutator {
 public:
  explicit Inliner(const ScheduleState* state) : state_(state) {}
  using IRMutator::Mutate;

 protected:
  Expr MutateLoad(const Load* op, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = MutateAll(op->indices, &idx);
    const Stage* p = state_ ? state_->ByBuffer(op->buffer.get()) : nullptr;
    if (!p || !p->inlined()) return changed ? Load::Make(op->buffer, idx) : self;
    VarMap m;
    for (int d = 0; d < p->rank(); ++d) m[p->axes()[d].var.node()] = idx[d];
    return Mutate(Substitute(p->body(), m));
  }

 private:
  const ScheduleState* state_;
};

absl::StatusOr<MemoryScope> ParseScope(const std::string& scope, const std::string& what) {
  if (scope == "shared") return MemoryScope::kShared;
  if (scope == "local") return MemoryScope::kLocal;
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": unknown scope '", scope, "'; the scopes are \"shared\" and \"local\""));
}

/// Stages (other than `except`) whose element reads `buffer`, by name.
std::vector<std::string> OtherReaders(const ScheduleState& state, const BufferNode* buffer,
                                      const Stage* except) {
  std::vector<std::string> names;
  for (auto& s : state.stages) {
    if (s.get() == except || s->inlined() || s->folded()) continue;
    if (s->InlinedBodyReads(buffer)) names.push_back(s->tensor().name());
  }
  return names;
}

bool IsScheduled(const Stage& s) {
  if (!s.relations().empty()) return true;
  for (int leaf : s.leaves()) {
    if (s.axes()[leaf].kind != ForKind::kSerial) return true;
  }
  for (size_t i = 0; i < s.leaves().size(); ++i) {
    if (s.leaves()[i] != static_cast<int>(i)) return true;
  }
  return false;
}

}  // namespace

void ScheduleState::Index(Stage* stage) {
  by_tensor[stage->tensor().node().get()] = stage;
  by_buffer.emplace(stage->tensor()->buffer.get(), stage);
}

Stage* ScheduleState::ByBuffer(const BufferNode* buffer) const {
  auto it = by_buffer.find(buffer);
  return it == by_buffer.end() ? nullptr : it->second;
}

const Buffer& Stage::store_buffer() const {
  if (attach_) return attach_->buffer;
  if (fold_buffer_) return fold_buffer_;
  return tensor_->buffer;
}

Expr Stage::InlinedBody() const {
  if (!body_.defined()) return body_;  // an extern stage: no element expression
  return Inliner(state_).Mutate(body_);
}

bool Stage::InlinedBodyReads(const BufferNode* buffer) const {
  struct Finder : IRVisitor {
    const ScheduleState* state;
    const BufferNode* buffer;
    std::set<const Stage*> walked;
    bool found = false;
    using IRVisitor::Visit;
    void VisitLoad(const Load* op) override {
      if (found) return;
      IRVisitor::VisitLoad(op);  // the indices: the Inliner inlines into them too
      const Stage* p = state ? state->ByBuffer(op->buffer.get()) : nullptr;
      if (p && p->inlined()) {
        if (walked.insert(p).second) Visit(p->body());
      } else {
        found = found || op->buffer.get() == buffer;
      }
    }
  } f;
  if (!body_.defined()) return false;
  f.state = state_;
  f.buffer = buffer;
  f.Visit(body_);
  return f.found;
}

std::optional<std::vector<Expr>> Stage::ReadNotAtOwnIndex(const BufferNode* buffer,
                                                          bool flat) const {
  // Row-major offsets of `index` in `shape` (static), as affine forms; none when not static.
  auto offset = [](const std::vector<Expr>& index,
                   const std::vector<Expr>& shape) -> std::optional<AffineForm> {
    if (index.size() != shape.size()) return std::nullopt;
    AffineForm out;
    int64_t stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const int64_t* n = AsConstInt(shape[d]);
      if (!n) return std::nullopt;
      AffineForm term = Linearize(index[d]);
      for (auto& t : term.terms) out.terms.push_back({t.expr, t.coeff * stride});
      out.constant += term.constant * stride;
      stride *= *n;
    }
    return out;
  };
  std::vector<Expr> own(tensor_->axes.begin(), tensor_->axes.end());
  const std::optional<AffineForm> own_offset = flat ? offset(own, tensor_->shape) : std::nullopt;
  for (auto& idx : LoadsOf(InlinedBody(), buffer)) {
    bool at_own = static_cast<int>(idx.size()) == rank_;
    for (int d = 0; at_own && d < rank_; ++d) {
      at_own = idx[d].same_as(tensor_->axes[d]) || idx[d].same_as(axes_[d].var);
    }
    if (!at_own && own_offset) {
      // The root axes may be renamed in the body (axes_ against tensor_->axes): both count.
      std::vector<Expr> renamed = idx;
      VarMap to_tensor;
      for (int d = 0; d < rank_; ++d) to_tensor[axes_[d].var.node()] = tensor_->axes[d];
      for (Expr& e : renamed) e = Substitute(e, to_tensor);
      auto read = offset(renamed, buffer->shape);
      if (read) {
        AffineForm diff = Subtract(*read, *own_offset);
        at_own = diff.constant == 0;
        for (auto& t : diff.terms) at_own = at_own && t.coeff == 0;
      }
    }
    if (!at_own) return idx;
  }
  return std::nullopt;
}

bool Stage::ReadsAlongOwnRows(const BufferNode* buffer, int row_dims) const {
  const int reduce = num_root_ - rank_;
  if (row_dims > rank_) return false;
  for (auto& idx : LoadsOf(InlinedBody(), buffer)) {
    if (static_cast<int>(idx.size()) != row_dims + reduce) return false;
    for (int d = 0; d < row_dims; ++d) {
      if (!idx[d].same_as(tensor_->axes[d]) && !idx[d].same_as(axes_[d].var)) return false;
    }
    for (int k = 0; k < reduce; ++k) {
      const Expr& e = idx[row_dims + k];
      const bool original = k < static_cast<int>(tensor_->reduce_axes.size()) &&
                            e.same_as(tensor_->reduce_axes[k].var);
      if (!original && !e.same_as(axes_[rank_ + k].var)) return false;
    }
  }
  return true;
}

std::vector<const Stage*> Stage::AttachedAt(const Var& loop) const {
  std::vector<const Stage*> out;
  for (auto& s : state_->stages) {
    if (s->attach_ && s->attach_->consumer == this && s->attach_->loop.same_as(loop)) {
      out.push_back(s.get());
    }
  }
  return out;
}

Stage::Signature Stage::LoopSignature() const {
  Signature sig;
  for (const Stage* s = this; s; s = s->attach_ ? s->attach_->consumer : nullptr) {
    Signature::Level level;
    for (int leaf : s->leaves_) level.leaves.push_back(s->axes_[leaf]);
    level.num_relations = s->relations_.size();
    if (s->attach_) level.attach_loop = s->attach_->loop;
    sig.levels.push_back(std::move(level));
  }
  return sig;
}

bool Stage::Signature::operator==(const Signature& other) const {
  // Only thread bindings change a region (shared buffers widen over threads); unroll,
  // vectorize and parallel annotations after compute_at are fine.
  auto thread_axis = [](const Axis& a) { return a.kind == ForKind::kGpuThread ? a.bind_axis : -1; };
  auto same_loop = [&](const Axis& a, const Axis& b) {
    return a.var.same_as(b.var) && StructuralEqual(a.extent, b.extent) &&
           thread_axis(a) == thread_axis(b);
  };
  if (levels.size() != other.levels.size()) return false;
  for (size_t k = 0; k < levels.size(); ++k) {
    const Level &a = levels[k], &b = other.levels[k];
    if (a.num_relations != b.num_relations || !a.attach_loop.same_as(b.attach_loop) ||
        !std::equal(a.leaves.begin(), a.leaves.end(), b.leaves.begin(), b.leaves.end(),
                    same_loop)) {
      return false;
    }
  }
  return true;
}

void Stage::RenameRootAxes() {
  VarMap rename;
  for (int a = 0; a < num_root_; ++a) {
    Var fresh(tensor_.name() + "_" + axes_[a].var.name(), axes_[a].var.type());
    rename[axes_[a].var.node()] = fresh;
    axes_[a].var = fresh;
  }
  body_ = Substitute(body_, rename);
  if (fold_value_.defined()) fold_value_ = Substitute(fold_value_, rename);
}

absl::Status Stage::ComputeInline() {
  std::string what = "compute_inline of stage " + tensor_.name();
  if (tensor_->extern_body) {
    return absl::InvalidArgumentError(what + ": it is an extern call, not an expression");
  }
  if (reduce_ != ReduceKind::kNone) {
    return absl::InvalidArgumentError(
        what + ": it is a reduction; its value needs its own loops (compute_at it instead)");
  }
  if (attach_ || folded() || fold_buffer_) {
    return absl::InvalidArgumentError(what +
                                      ": it is already computed at or folded into "
                                      "another stage");
  }
  inlined_ = true;
  return absl::OkStatus();
}

absl::Status Stage::ReverseComputeInline() {
  std::string what = "reverse_compute_inline of stage " + tensor_.name();
  if (reduce_ != ReduceKind::kNone) {
    return absl::InvalidArgumentError(what + ": it is a reduction, not elementwise");
  }
  if (inlined_ || attach_ || folded() || fold_buffer_) {
    return absl::InvalidArgumentError(what + ": it is already inlined, computed at or folded");
  }
  Expr body = InlinedBody();
  std::vector<Stage*> producers;
  for (auto& s : state_->stages) {
    if (s.get() != this && !LoadsOf(body, s->tensor()->buffer.get()).empty()) {
      producers.push_back(s.get());
    }
  }
  if (producers.size() != 1) {
    std::vector<std::string> names;
    for (Stage* p : producers) names.push_back(p->tensor().name());
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": it reads ", producers.size(), " computed tensors (",
                     absl::StrJoin(names, ", "), "); it needs exactly one producer"));
  }
  Stage& p = *producers[0];
  std::string pname = p.tensor().name();
  if (p.reduce_ != ReduceKind::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": its producer ", pname,
                     " is a reduction, whose value is incomplete when it is stored"));
  }
  if (p.attach_ || p.fold_buffer_ || p.folded()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": its producer ", pname,
                                                   " is computed at or folded into another stage"));
  }
  if (p.rank_ != rank_) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": its producer ", pname, " has rank ", p.rank_, ", not ", rank_));
  }
  for (int d = 0; d < rank_; ++d) {
    if (!StructuralEqual(p.axes_[d].extent, axes_[d].extent)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": its producer ", pname, " has extent ",
                                                     ToString(p.axes_[d].extent), " in dimension ",
                                                     d, ", not ", ToString(axes_[d].extent)));
    }
  }
  if (auto idx = ReadNotAtOwnIndex(p.tensor()->buffer.get())) {
    std::vector<std::string> own, got;
    for (int e = 0; e < rank_; ++e) own.push_back(axes_[e].var.name());
    for (const Expr& i : *idx) got.push_back(ToString(i));
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": it reads ", pname, "[", absl::StrJoin(got, ", "),
                     "], not only the element at its own index [", absl::StrJoin(own, ", "), "]"));
  }
  std::vector<std::string> others = OtherReaders(*state_, p.tensor()->buffer.get(), this);
  if (!others.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": its producer ", pname, " is also read by ", absl::StrJoin(others, ", ")));
  }
  p.fold_placeholder_ = Var(pname + "_value", p.tensor_->dtype);
  VarMap to_producer;
  for (int d = 0; d < rank_; ++d) to_producer[axes_[d].var.node()] = p.axes_[d].var;
  p.fold_value_ =
      Substitute(ReplaceLoads(p.tensor()->buffer.get(), nullptr, p.fold_placeholder_).Mutate(body),
                 to_producer);
  p.fold_buffer_ = tensor_->buffer;
  folded_into_ = &p;
  return absl::OkStatus();
}

NestOrder::NestOrder(const std::vector<std::unique_ptr<Stage>>& stages) {
  for (const auto& s : stages) position_.emplace(s.get(), position_.size());
}

bool NestOrder::RunsAfter(const Stage& s, const Stage& other) const {
  const Stage* root = &s;
  while (root->attach()) root = root->attach()->consumer;
  const Stage* other_root = &other;
  while (other_root->attach()) other_root = other_root->attach()->consumer;
  return position_.at(root) > position_.at(other_root);
}

absl::Status Stage::ComputeAt(Stage& consumer, const Var& loop, bool thread_private) {
  return AttachAt(consumer, loop, thread_private, /*own_buffer=*/false);
}

absl::Status Stage::AttachAt(Stage& consumer, const Var& loop, bool thread_private,
                             bool own_buffer) {
  std::string loop_name = loop.defined() && loop.As<Variable>() ? loop.name() : "?";
  std::string what = absl::StrCat("compute_at of stage ", tensor_.name(), " at loop ", loop_name,
                                  " of stage ", consumer.tensor().name());
  if (&consumer == this)
    return absl::InvalidArgumentError(what + ": a stage is not its own consumer");
  if (inlined_ || folded() || fold_buffer_ || attach_) {
    return absl::InvalidArgumentError(
        what + ": the stage is already inlined, folded or computed at a loop");
  }
  if (consumer.inlined_ || consumer.folded()) {
    return absl::InvalidArgumentError(what + ": the consumer is inlined or folded away");
  }
  if (IsScheduled(*this)) {
    return absl::InvalidArgumentError(
        what + ": schedule this stage's own loops after compute_at, not before");
  }
  auto pos = std::find_if(consumer.leaves_.begin(), consumer.leaves_.end(),
                          [&](int idx) { return consumer.axes_[idx].var.same_as(loop); });
  if (pos == consumer.leaves_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", loop_name, " is not a loop of stage ", consumer.tensor().name(),
                     "; its loops are ", consumer.LeafNames()));
  }
  const BufferNode* buffer = tensor_->buffer.get();
  Expr element = ElementInLeafVars(consumer);
  std::vector<std::vector<Expr>> accesses = LoadsOf(element, buffer);
  const bool shared = tensor_->buffer->scope == MemoryScope::kShared;
  if (thread_private && shared) {
    return absl::InvalidArgumentError(what + ": a shared buffer is not private to a thread");
  }
  // A thread-private buffer holds one thread's region: the variables of loops bound to a
  // thread index inside the attach point (this stage's readers') are that index, not relaxed.
  VarMap thread_of;
  auto fix_to_thread = [&](const Axis& a) {
    if (!thread_private || a.kind != ForKind::kGpuThread) return false;
    thread_of[a.var.node()] = ThreadIndexExpr(a.bind_axis);
    return true;
  };
  // Readers already computed at the same loop of `consumer` (a softmax's row sum reading the
  // row max, both inside the row's block loop) run inside the region too: their loads count,
  // their region-relative root axes mapped back to indices and relaxed over the region. For a
  // thread-private buffer, a reader whose loops are bound to thread indices (a row reduction
  // over the threads) counts its loads in its leaf loops instead: only its thread's share.
  // Into its own buffer the tensor is whole once the consumer's nest has run: a reader whose
  // nest runs after the consumer's (its root stage, the one it is computed at followed out,
  // comes later) may read it there; one whose nest runs before it, or inside it at another
  // loop, may not.
  std::optional<NestOrder> order;  // only asked of a stage computed into its own buffer
  if (own_buffer) order.emplace(state_->stages);
  auto runs_after_consumer = [&](const Stage* s) {
    return order && order->RunsAfter(*s, consumer);
  };
  std::vector<std::string> others;
  RelaxedLoops relaxed;
  for (auto& s : state_->stages) {
    if (s.get() == &consumer || s.get() == this || s->inlined() || s->folded()) continue;
    if (!s->InlinedBodyReads(buffer)) continue;
    const Attach* sa = s->attach();
    if (!sa || sa->consumer != &consumer || !sa->loop.same_as(loop)) {
      if (!runs_after_consumer(s.get())) others.push_back(s->tensor().name());
      continue;
    }
    std::vector<std::vector<Expr>> reads = LoadsOf(s->InlinedBody(), buffer);
    bool per_thread = false;
    for (int leaf : s->leaves_) per_thread |= fix_to_thread(s->axes_[leaf]);
    if (per_thread) {
      // A split with a tail (a row of symbolic length held to a bound: AssumeExtentAtMost)
      // only skips some of the leaf loops' elements: the region over them still covers them.
      reads = LoadsOf(ElementInLeafVars(*s), buffer);
      for (int leaf : s->leaves_) {
        const Axis& a = s->axes_[leaf];
        if (a.kind == ForKind::kGpuThread) continue;
        const int64_t* c = AsConstInt(a.extent);
        if (c) {
          relaxed[a.var.node()] = *c;
          continue;
        }
        for (auto& idx : reads) {
          for (auto& e : idx) {
            if (!UsesVar(e, a.var.As<Variable>())) continue;
            return absl::InvalidArgumentError(absl::StrCat(
                what, ": loop ", a.var.name(), " of reader ", s->tensor().name(),
                " indexes the region and has extent ", ToString(a.extent), ", not a constant"));
          }
        }
      }
      accesses.insert(accesses.end(), reads.begin(), reads.end());
      continue;
    }
    VarMap to_index;
    for (int d = 0; d < s->rank(); ++d) {
      const Var& v = s->axes()[d].var;
      to_index[v.node()] = sa->min[d] + v * IndexConst(sa->stride[d]);
      relaxed[v.node()] = sa->extent[d];
    }
    for (int d = s->rank(); d < s->num_root_axes(); ++d) {
      const int64_t* c = AsConstInt(s->axes()[d].extent);
      if (c) relaxed[s->axes()[d].var.node()] = *c;
    }
    for (auto& idx : reads) {
      for (Expr& e : idx) e = Substitute(e, to_index);
      accesses.push_back(idx);
    }
  }
  if (accesses.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": neither stage ", consumer.tensor().name(),
                     " nor a stage computed at that loop reads ", tensor_.name(),
                     ", so its loops do not enclose a use of it"));
  }
  if (!others.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", tensor_.name(), " is also read by ", absl::StrJoin(others, ", "),
        ", which would not see the region computed inside ", consumer.tensor().name()));
  }
  bool guard = false;
  // A loop inside the attach point whose variable no access uses needs no constant extent
  // (a row's symbolic column loop around a read of the row's reduction).
  auto used = [&](const Var& v) {
    for (auto& idx : accesses) {
      for (auto& e : idx) {
        if (UsesVar(e, v.As<Variable>())) return true;
      }
    }
    return false;
  };
  auto relax = [&](const Axis& a) -> absl::Status {
    const int64_t* c = AsConstInt(a.extent);
    if (!c && !used(a.var)) return absl::OkStatus();
    if (!c) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": loop ", a.var.name(),
                                                     " runs inside the attach point and has "
                                                     "extent ",
                                                     ToString(a.extent), ", not a constant"));
    }
    relaxed[a.var.node()] = *c;
    return absl::OkStatus();
  };
  for (auto it = pos + 1; it != consumer.leaves_.end(); ++it) {
    if (fix_to_thread(consumer.axes_[*it])) continue;
    absl::Status st = relax(consumer.axes_[*it]);
    if (!st.ok()) return st;
  }
  // The attach loop and those enclosing it, up the chain of compute_at points.
  const Stage* s = &consumer;
  std::vector<int>::const_iterator end = pos + 1;
  while (s) {
    for (const Relation& r : s->relations_) guard |= r.kind == Relation::Kind::kSplit && !r.exact;
    guard |= s->attach_ && s->attach_->guard;
    for (auto it = s->leaves_.begin(); it != end; ++it) {
      const Axis& a = s->axes_[*it];
      if (shared && a.kind == ForKind::kGpuThread) {
        absl::Status st = relax(a);
        if (!st.ok()) return st;
      }
    }
    if (!s->attach_) break;
    const Stage* up = s->attach_->consumer;
    const Var& up_loop = s->attach_->loop;
    end = std::find_if(up->leaves_.begin(), up->leaves_.end(),
                       [&](int idx) { return up->axes_[idx].var.same_as(up_loop); }) +
          1;
    s = up;
  }
  if (!thread_of.empty()) {
    for (auto& idx : accesses) {
      for (Expr& e : idx) e = Substitute(e, thread_of);
    }
  }
  auto region = InferRegion(accesses, relaxed, what);
  if (!region.ok()) return region.status();
  // A dimension of one element is read at index 0 only (other indices are guarded off: a
  // keepdim reduction read by a consumer whose columns are spread over threads): its region is
  // that element, not one per position of the loops relaxed over it.
  for (int d = 0; d < rank_; ++d) {
    const int64_t* n = AsConstInt(tensor_->shape[d]);
    if (n && *n == 1 && region->extent[d] > 1) {
      region->min[d] = IndexConst(0);
      region->extent[d] = 1;
      region->stride[d] = 1;
    }
  }
  RenameRootAxes();
  std::vector<Expr> shape;
  for (int d = 0; d < rank_; ++d) {
    axes_[d].extent = IndexConst(region->extent[d]);
    shape.push_back(axes_[d].extent);
  }
  MemoryScope scope = shared ? MemoryScope::kShared : MemoryScope::kLocal;
  Attach at;
  at.consumer = &consumer;
  at.loop = loop;
  at.min = region->min;
  at.extent = region->extent;
  at.stride = region->stride;
  at.buffer = MakeBuffer(tensor_.name(), tensor_->dtype, shape, scope);
  at.signature = consumer.LoopSignature();
  at.guard = guard;
  at.thread_private = thread_private;
  attach_ = at;
  return absl::OkStatus();
}

absl::Status Stage::ComputeAtOwnBuffer(Stage& consumer, const Var& loop) {
  if (tensor_->buffer->scope != MemoryScope::kGlobal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compute_at of stage ", tensor_.name(), " into its own buffer: the buffer is not global"));
  }
  absl::Status st = AttachAt(consumer, loop, /*thread_private=*/false, /*own_buffer=*/true);
  if (!st.ok()) return st;
  attach_->own_buffer = true;
  attach_->buffer = tensor_->buffer;
  return absl::OkStatus();
}

absl::Status Stage::StorageAlign(int axis, int factor, int offset) {
  std::string what = absl::StrCat("storage_align of stage ", tensor_.name());
  if (attach_ && attach_->own_buffer) {
    return absl::InvalidArgumentError(what + ": the stage stores to its own buffer");
  }
  if (!attach_) {
    return absl::InvalidArgumentError(
        what + ": the stage is not computed at a consumer's loop; only region buffers are padded");
  }
  if (axis != rank_ - 2) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": axis ", axis,
                                                   " is not the second-last dimension (", rank_ - 2,
                                                   "); only the row stride can be padded"));
  }
  if (factor <= 0 || offset < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": factor ", factor, " and offset ",
                                                   offset, " must be positive and non-negative"));
  }
  std::vector<Expr> shape = attach_->buffer->shape;
  int64_t row = attach_->extent[rank_ - 1];
  row = (row + factor - 1) / factor * factor + offset;
  shape[rank_ - 1] = IndexConst(row);
  attach_->buffer =
      MakeBuffer(attach_->buffer->name, attach_->buffer->dtype, shape, attach_->buffer->scope);
  align_ = {axis, factor, offset};
  return absl::OkStatus();
}

Stage* Schedule::InsertStage(Tensor t, const Stage* before) {
  auto& stages = state_->stages;
  auto it = std::find_if(stages.begin(), stages.end(),
                         [&](const std::unique_ptr<Stage>& s) { return s.get() == before; });
  it = stages.insert(it, std::make_unique<Stage>(std::move(t), state_.get()));
  state_->Index(it->get());
  return it->get();
}

absl::StatusOr<Tensor> Schedule::CacheRead(const Tensor& tensor, const std::string& scope,
                                           const std::vector<Tensor>& readers) {
  std::string what = "cache_read of " + (tensor.defined() ? tensor.name() : std::string("?"));
  auto sc = ParseScope(scope, what);
  if (!sc.ok()) return sc.status();
  if (readers.empty()) return absl::InvalidArgumentError(what + ": no readers given");
  std::vector<Stage*> stages;
  for (auto& r : readers) {
    auto it = state_->by_tensor.find(r.node().get());
    if (it == state_->by_tensor.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": reader ", r.name(), " is not a stage of this schedule"));
    }
    if (LoadsOf(it->second->body(), tensor->buffer.get()).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": stage ", r.name(), " does not read ", tensor.name()));
    }
    stages.push_back(it->second);
  }
  Tensor cache = Compute(
      tensor->shape, [&](const std::vector<Expr>& i) { return tensor(i); },
      tensor.name() + "_" + scope);
  cache->buffer->scope = *sc;
  const Stage* first = nullptr;
  for (auto& s : state_->stages) {
    if (std::find(stages.begin(), stages.end(), s.get()) != stages.end()) {
      first = s.get();
      break;
    }
  }
  InsertStage(cache, first);
  for (Stage* s : stages) {
    s->body_ = ReplaceLoads(tensor->buffer.get(), cache->buffer).Mutate(s->body_);
  }
  return cache;
}

absl::StatusOr<Tensor> Schedule::CacheWrite(const Tensor& tensor, const std::string& scope) {
  std::string what = "cache_write of " + tensor.name();
  auto sc = ParseScope(scope, what);
  if (!sc.ok()) return sc.status();
  auto found = state_->by_tensor.find(tensor.node().get());
  if (found == state_->by_tensor.end()) {
    return absl::InvalidArgumentError(what + ": it is not a compute of this schedule");
  }
  Stage& stage = *found->second;
  if (IsScheduled(stage) || stage.attach_ || stage.inlined_ || stage.folded() ||
      stage.fold_buffer_) {
    return absl::InvalidArgumentError(what + ": call it before scheduling the stage");
  }
  auto node = std::make_shared<TensorNode>();
  node->name = tensor.name() + "_" + scope;
  node->dtype = tensor->dtype;
  node->shape = tensor->shape;
  node->is_placeholder = false;
  node->reduce = stage.reduce_;
  node->inputs = tensor->inputs;
  VarMap fresh;
  for (int a = 0; a < stage.num_root_; ++a) {
    const Var& old = stage.axes_[a].var;
    Var v(old.name(), old.type());
    fresh[old.node()] = v;
    if (a < stage.rank_) {
      node->axes.push_back(v);
    } else {
      node->reduce_axes.push_back({v, stage.axes_[a].extent});
    }
  }
  node->body = Substitute(stage.body_, fresh);
  node->buffer = MakeBuffer(node->name, node->dtype, node->shape, *sc);
  node->buffer->defining_tensor = node;
  Tensor cache(node);
  InsertStage(cache, &stage);
  std::vector<Expr> index;
  std::vector<Var> spatial;
  for (int d = 0; d < stage.rank_; ++d) {
    index.push_back(stage.axes_[d].var);
    spatial.push_back(stage.axes_[d].var);
  }
  stage.body_ = Load::Make(node->buffer, index);
  stage.reduce_ = ReduceKind::kNone;
  stage.ResetAxes(spatial, {});
  return cache;
}

}  // namespace cinn_like::ir
