/// \file The schedule primitives: bookkeeping on a stage's axes, with argument checks.
#include "ir/schedule.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "ir/transforms/simplify.h"

namespace cinn_like::ir {
namespace {

const char* kThreadTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                             "threadIdx.x", "threadIdx.y", "threadIdx.z"};

}  // namespace

Stage::Stage(Tensor tensor, ScheduleState* state)
    : tensor_(std::move(tensor)), state_(state), body_(tensor_->body), reduce_(tensor_->reduce) {
  ResetAxes(tensor_->axes, tensor_->reduce_axes);
}

void Stage::ResetAxes(std::vector<Var> spatial, std::vector<IterVar> reduce_axes) {
  axes_.clear();
  relations_.clear();
  leaves_.clear();
  rank_ = static_cast<int>(spatial.size());
  num_root_ = rank_ + static_cast<int>(reduce_axes.size());
  for (size_t i = 0; i < spatial.size(); ++i) {
    leaves_.push_back(AddAxis(spatial[i], tensor_->shape[i], false));
  }
  for (auto& r : reduce_axes) leaves_.push_back(AddAxis(r.var, r.extent, true));
}

int Stage::AddAxis(Var var, Expr extent, bool is_reduce) {
  axes_.push_back({std::move(var), Simplify(extent), is_reduce});
  return static_cast<int>(axes_.size()) - 1;
}

std::string Stage::LeafNames() const {
  std::string s;
  for (size_t i = 0; i < leaves_.size(); ++i) {
    absl::StrAppend(&s, i ? ", " : "", axes_[leaves_[i]].var.name());
  }
  return s;
}

absl::StatusOr<Var> Stage::LeafAxis(int i) const {
  if (i < 0 || i >= static_cast<int>(leaves_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("stage ", tensor_.name(), " has no loop level ",
                                                   i, "; its loops are ", LeafNames()));
  }
  return axes_[leaves_[i]].var;
}

absl::StatusOr<int> Stage::FindLeaf(const Var& axis, const char* primitive) const {
  if (!axis.defined() || !axis.As<Variable>()) {
    return absl::InvalidArgumentError(
        absl::StrCat(primitive, " on stage ", tensor_.name(), ": the axis is not a variable"));
  }
  for (int idx : leaves_) {
    if (axes_[idx].var.same_as(axis)) return idx;
  }
  bool replaced = false;
  for (auto& a : axes_) replaced |= a.var.same_as(axis);
  return absl::InvalidArgumentError(
      absl::StrCat(primitive, " on stage ", tensor_.name(), ": axis ", axis.name(),
                   replaced ? " was already split or fused away" : " is not an axis of this stage",
                   "; its loops are ", LeafNames()));
}

absl::StatusOr<std::pair<Var, Var>> Stage::SplitImpl(const Var& axis, int amount, bool by_nparts) {
  const char* what = by_nparts ? "split by nparts" : "split";
  auto found = FindLeaf(axis, what);
  if (!found.ok()) return found.status();
  int parent = *found;
  if (amount <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " on stage ", tensor_.name(), ": axis ",
                                                   axis.name(), " needs a positive amount, got ",
                                                   amount));
  }
  if (axes_[parent].kind != ForKind::kSerial) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " on stage ", tensor_.name(), ": axis ", axis.name(), " is already marked ",
        ForKindName(axes_[parent].kind), "; split before annotating"));
  }
  Expr extent = axes_[parent].extent;
  bool is_reduce = axes_[parent].is_reduce;
  Expr amount_e(amount);
  Expr ceil_div = Simplify((extent + (amount - 1)) / amount_e);
  Expr outer_extent = by_nparts ? amount_e : ceil_div;
  Expr inner_extent = by_nparts ? ceil_div : amount_e;
  const int64_t* c = AsConstInt(extent);
  bool exact = c && *c % amount == 0;
  std::string name = axis.name();
  // Take copies before AddAxis grows axes_.
  int outer = AddAxis(Var(name + "_outer"), outer_extent, is_reduce);
  int inner = AddAxis(Var(name + "_inner"), inner_extent, is_reduce);
  Relation r{Relation::Kind::kSplit};
  r.parent = parent;
  r.outer = outer;
  r.inner = inner;
  r.factor = inner_extent;
  r.exact = exact || (by_nparts && c && *c % amount == 0);
  relations_.push_back(r);
  auto pos = std::find(leaves_.begin(), leaves_.end(), parent);
  pos = leaves_.erase(pos);
  leaves_.insert(pos, {outer, inner});
  return std::make_pair(axes_[outer].var, axes_[inner].var);
}

absl::StatusOr<std::pair<Var, Var>> Stage::Split(const Var& axis, int factor) {
  return SplitImpl(axis, factor, false);
}

absl::StatusOr<std::pair<Var, Var>> Stage::SplitNParts(const Var& axis, int nparts) {
  return SplitImpl(axis, nparts, true);
}

absl::Status Stage::Reorder(const std::vector<Var>& order) {
  std::vector<int> idx, positions;
  std::set<int> seen;
  for (auto& v : order) {
    auto found = FindLeaf(v, "reorder");
    if (!found.ok()) return found.status();
    if (!seen.insert(*found).second) {
      return absl::InvalidArgumentError(absl::StrCat("reorder on stage ", tensor_.name(), ": axis ",
                                                     v.name(), " is listed twice"));
    }
    idx.push_back(*found);
    positions.push_back(
        static_cast<int>(std::find(leaves_.begin(), leaves_.end(), *found) - leaves_.begin()));
  }
  std::sort(positions.begin(), positions.end());
  for (size_t i = 0; i < idx.size(); ++i) leaves_[positions[i]] = idx[i];
  return absl::OkStatus();
}

absl::StatusOr<std::array<Var, 4>> Stage::Tile(const Var& x, const Var& y, int x_factor,
                                               int y_factor) {
  auto sx = Split(x, x_factor);
  if (!sx.ok()) return sx.status();
  auto sy = Split(y, y_factor);
  if (!sy.ok()) return sy.status();
  std::array<Var, 4> out{sx->first, sy->first, sx->second, sy->second};
  absl::Status st = Reorder({out[0], out[1], out[2], out[3]});
  if (!st.ok()) return st;
  return out;
}

absl::StatusOr<Var> Stage::Fuse(const Var& outer, const Var& inner) {
  auto o = FindLeaf(outer, "fuse");
  if (!o.ok()) return o.status();
  auto i = FindLeaf(inner, "fuse");
  if (!i.ok()) return i.status();
  auto po = std::find(leaves_.begin(), leaves_.end(), *o);
  if (po + 1 == leaves_.end() || *(po + 1) != *i) {
    return absl::InvalidArgumentError(absl::StrCat("fuse on stage ", tensor_.name(), ": ",
                                                   outer.name(), " must directly enclose ",
                                                   inner.name(), "; the loops are ", LeafNames()));
  }
  if (axes_[*o].is_reduce != axes_[*i].is_reduce) {
    return absl::InvalidArgumentError(absl::StrCat("fuse on stage ", tensor_.name(),
                                                   ": cannot fuse spatial and reduce axes ",
                                                   outer.name(), " and ", inner.name()));
  }
  int fused = AddAxis(Var(outer.name() + "_" + inner.name() + "_fused"),
                      axes_[*o].extent * axes_[*i].extent, axes_[*o].is_reduce);
  Relation r{Relation::Kind::kFuse};
  r.outer = *o;
  r.inner = *i;
  r.fused = fused;
  relations_.push_back(r);
  po = std::find(leaves_.begin(), leaves_.end(), *o);
  po = leaves_.erase(po, po + 2);
  leaves_.insert(po, fused);
  return axes_[fused].var;
}

absl::Status Stage::Vectorize(const Var& axis) {
  auto found = FindLeaf(axis, "vectorize");
  if (!found.ok()) return found.status();
  Axis& a = axes_[*found];
  const int64_t* c = AsConstInt(a.extent);
  if (!c) {
    return absl::InvalidArgumentError(
        absl::StrCat("vectorize on stage ", tensor_.name(), ": axis ", axis.name(), " has extent ",
                     ToString(a.extent), ", not a constant; split it by a constant factor first"));
  }
  if (*c < 2 || *c > 64) {
    return absl::InvalidArgumentError(absl::StrCat("vectorize on stage ", tensor_.name(), ": axis ",
                                                   axis.name(), " has extent ", *c,
                                                   "; vector widths from 2 to 64 are supported"));
  }
  // A vectorized reduce axis gets vector partials on CPUs (ir/transforms/vectorize_reduce.h).
  a.kind = ForKind::kVectorized;
  return absl::OkStatus();
}

absl::StatusOr<Var> Stage::Vectorize(const Var& axis, int factor) {
  auto parts = Split(axis, factor);
  if (!parts.ok()) return parts.status();
  absl::Status st = Vectorize(parts->second);
  if (!st.ok()) return st;
  return parts->second;
}

absl::Status Stage::AssumeExtentAtMost(const Var& axis, int64_t bound) {
  const std::string what = absl::StrCat("assume_extent_at_most on stage ", tensor_.name());
  auto found = FindLeaf(axis, "assume_extent_at_most");
  if (!found.ok()) return found.status();
  Axis& a = axes_[*found];
  if (AsConstInt(a.extent) || a.kind != ForKind::kSerial || bound <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": axis ", axis.name(), " (extent ", ToString(a.extent), ", ", ForKindName(a.kind),
        ") must be a serial loop of symbolic extent and ", bound, " positive"));
  }
  // Iterations past the true extent are skipped by the guard of the split that made the axis:
  // its parent's value outer * factor + inner then passes the parent's extent.
  bool guarded = false;
  for (const Relation& r : relations_) {
    guarded |= r.kind == Relation::Kind::kSplit && r.outer == *found && !r.exact;
  }
  if (!guarded) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": axis ", axis.name(), " is not the outer loop of a split with a tail guard"));
  }
  a.extent = IndexConst(bound);
  return absl::OkStatus();
}

absl::Status Stage::Unroll(const Var& axis, bool full) {
  auto found = FindLeaf(axis, "unroll");
  if (!found.ok()) return found.status();
  Axis& a = axes_[*found];
  if (!full) {
    a.kind = ForKind::kUnrollHint;
    return absl::OkStatus();
  }
  if (!AsConstInt(a.extent)) {
    return absl::InvalidArgumentError(absl::StrCat("unroll on stage ", tensor_.name(), ": axis ",
                                                   axis.name(), " has extent ", ToString(a.extent),
                                                   ", not a constant"));
  }
  a.kind = ForKind::kUnrolled;
  return absl::OkStatus();
}

absl::Status Stage::Parallel(const Var& axis) {
  auto found = FindLeaf(axis, "parallel");
  if (!found.ok()) return found.status();
  if (axes_[*found].is_reduce) {
    return absl::InvalidArgumentError(absl::StrCat("parallel on stage ", tensor_.name(), ": axis ",
                                                   axis.name(),
                                                   " is a reduce axis; its iterations conflict"));
  }
  axes_[*found].kind = ForKind::kParallel;
  return absl::OkStatus();
}

absl::Status Stage::Bind(const Var& axis, const std::string& thread_tag) {
  auto found = FindLeaf(axis, "bind");
  if (!found.ok()) return found.status();
  int tag = -1;
  for (int t = 0; t < 6; ++t) {
    if (thread_tag == kThreadTags[t]) tag = t;
  }
  if (tag < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bind on stage ", tensor_.name(), ": '",
                                                   thread_tag,
                                                   "' is not blockIdx.x/y/z or threadIdx.x/y/z"));
  }
  ForKind kind = tag < 3 ? ForKind::kGpuBlock : ForKind::kGpuThread;
  for (int idx : leaves_) {
    const Axis& other = axes_[idx];
    if (idx != *found && other.kind == kind && other.bind_axis == tag % 3) {
      return absl::InvalidArgumentError(absl::StrCat("bind on stage ", tensor_.name(), ": ",
                                                     thread_tag, " is already bound to axis ",
                                                     other.var.name()));
    }
  }
  // A reduce axis on threadIdx.x becomes a block reduce (ir/transforms/lower_thread_reduce.h).
  if (axes_[*found].is_reduce && thread_tag != "threadIdx.x") {
    return absl::InvalidArgumentError(absl::StrCat(
        "bind on stage ", tensor_.name(), ": axis ", axis.name(), " is a reduce axis; only ",
        "threadIdx.x can run a reduction across threads, not ", thread_tag));
  }
  axes_[*found].kind = kind;
  axes_[*found].bind_axis = tag % 3;
  return absl::OkStatus();
}

Schedule Schedule::Create(const std::vector<Tensor>& outputs) {
  Schedule s;
  std::set<const TensorNode*> visited;
  std::function<void(const std::shared_ptr<TensorNode>&)> visit =
      [&](const std::shared_ptr<TensorNode>& t) {
        if (t->is_placeholder || !visited.insert(t.get()).second) return;
        for (auto& in : t->inputs) visit(in);
        s.state_->stages.push_back(std::make_unique<Stage>(Tensor(t), s.state_.get()));
        s.state_->Index(s.state_->stages.back().get());
      };
  for (auto& o : outputs) visit(o.node());
  return s;
}

Stage& Schedule::operator[](const Tensor& t) {
  auto it = state_->by_tensor.find(t.node().get());
  CHECK(it != state_->by_tensor.end())
      << "tensor " << t.name() << " is not a compute of this schedule";
  return *it->second;
}

}  // namespace cinn_like::ir
