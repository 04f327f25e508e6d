/// \file rfactor: a reduction split into partial reductions over one factored axis, and the
/// final reduction of those partials.
#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "ir/schedule.h"
#include "ir/substitute.h"

namespace cinn_like::ir {

absl::StatusOr<Tensor> Schedule::Rfactor(const Tensor& tensor, const Var& axis) {
  std::string what = "rfactor of " + tensor.name();
  auto found = state_->by_tensor.find(tensor.node().get());
  if (found == state_->by_tensor.end()) {
    return absl::InvalidArgumentError(what + ": it is not a compute of this schedule");
  }
  Stage& stage = *found->second;
  if (stage.reduce_ == ReduceKind::kNone) {
    return absl::InvalidArgumentError(what + ": it is not a reduction");
  }
  if (stage.attach_ || stage.inlined_ || stage.folded() || stage.fold_buffer_) {
    return absl::InvalidArgumentError(what + ": call it before compute_at/inline");
  }
  auto leaf = stage.FindLeaf(axis, "rfactor");
  if (!leaf.ok()) return leaf.status();
  // The axis must come from a split of a root reduce axis.
  const Stage::Relation* split = nullptr;
  for (auto& r : stage.relations_) {
    if (r.kind == Stage::Relation::Kind::kSplit && (r.outer == *leaf || r.inner == *leaf) &&
        r.parent >= stage.rank_ && r.parent < stage.num_root_) {
      split = &r;
    }
  }
  if (!split) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": axis ", axis.name(),
        " is not one half of a split of a reduce axis; its loops are ", stage.LeafNames()));
  }
  const Stage::Axis& factored = stage.axes_[*leaf];
  const Stage::Axis& other = stage.axes_[split->outer == *leaf ? split->inner : split->outer];
  const Stage::Axis& root = stage.axes_[split->parent];
  // B_rf[v, i...] = reduce over (other, remaining reduce axes) of body(root = split value).
  auto rf = std::make_shared<TensorNode>();
  rf->name = tensor.name() + "_rf";
  rf->dtype = tensor->dtype;
  rf->shape.push_back(factored.extent);
  rf->is_placeholder = false;
  rf->reduce = stage.reduce_;
  rf->inputs = tensor->inputs;
  VarMap fresh;
  Var v(axis.name(), axis.type());
  rf->axes.push_back(v);
  std::vector<Expr> b_index{Expr()};
  std::vector<Var> b_spatial;
  for (int d = 0; d < stage.rank_; ++d) {
    const Var& old = stage.axes_[d].var;
    Var nv(old.name(), old.type());
    fresh[old.node()] = nv;
    rf->axes.push_back(nv);
    rf->shape.push_back(tensor->shape[d]);
    b_spatial.push_back(old);
    b_index.push_back(old);
  }
  Var o(other.var.name(), other.var.type());
  rf->reduce_axes.push_back({o, other.extent});
  for (int a = stage.rank_; a < stage.num_root_; ++a) {
    if (a == split->parent) continue;
    const Var& old = stage.axes_[a].var;
    Var nv(old.name(), old.type());
    fresh[old.node()] = nv;
    rf->reduce_axes.push_back({nv, stage.axes_[a].extent});
  }
  Expr root_value =
      split->outer == *leaf ? Expr(v) * split->factor + o : Expr(o) * split->factor + v;
  fresh[root.var.node()] = root_value;
  Expr body = Substitute(stage.body_, fresh);
  if (!split->exact) {
    body = Select::Make(root_value < root.extent, body, ReduceInit(stage.reduce_, rf->dtype));
  }
  rf->body = body;
  rf->buffer = MakeBuffer(rf->name, rf->dtype, rf->shape);
  rf->buffer->defining_tensor = rf;
  Tensor partials(rf);
  InsertStage(partials, &stage);
  // B[i...] = reduce over v of B_rf[v, i...].
  Var rv(axis.name(), axis.type());
  b_index[0] = rv;
  stage.body_ = Load::Make(rf->buffer, b_index);
  stage.ResetAxes(b_spatial, {{rv, factored.extent}});
  return partials;
}

}  // namespace cinn_like::ir
