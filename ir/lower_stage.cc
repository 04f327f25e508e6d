/// \file Building a stage's loop nest from its leaves and relations.
#include "ir/lower_stage.h"

#include "absl/strings/str_cat.h"
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

}  // namespace

absl::StatusOr<Stmt> LowerStage(const Stage& stage) {
  const auto& axes = stage.axes();
  const TensorNode& t = *stage.tensor().operator->();
  // Values of every axis in terms of the leaf loop variables.
  std::vector<Expr> value(axes.size());
  for (int leaf : stage.leaves()) value[leaf] = axes[leaf].var;
  std::vector<Expr> spatial_guards, reduce_guards;
  for (auto it = stage.relations().rbegin(); it != stage.relations().rend(); ++it) {
    const Stage::Relation& r = *it;
    if (r.kind == Stage::Relation::Kind::kSplit) {
      value[r.parent] = value[r.outer] * r.factor + value[r.inner];
      if (!r.exact) {
        Expr guard = value[r.parent] < axes[r.parent].extent;
        (axes[r.parent].is_reduce ? reduce_guards : spatial_guards).push_back(guard);
      }
    } else {
      Expr inner_extent = axes[r.inner].extent;
      value[r.outer] = value[r.fused] / inner_extent;
      value[r.inner] = value[r.fused] % inner_extent;
    }
  }
  // Root axes come first in axes(): the dimensions, then the reduce axes.
  VarMap root_values;
  std::vector<Expr> index;
  for (size_t d = 0; d < t.axes.size(); ++d) {
    root_values[axes[d].var.node()] = value[d];
    index.push_back(value[d]);
  }
  for (size_t r = 0; r < t.reduce_axes.size(); ++r) {
    size_t a = t.axes.size() + r;
    root_values[axes[a].var.node()] = value[a];
  }
  for (size_t a = 0; a < t.axes.size() + t.reduce_axes.size(); ++a) {
    if (!value[a].defined()) {
      return absl::InternalError(absl::StrCat("stage ", t.name, ": axis ", axes[a].var.name(),
                                              " has no value after scheduling"));
    }
  }
  Expr element = Substitute(t.body, root_values);
  const auto& leaves = stage.leaves();

  if (t.reduce == ReduceKind::kNone) {
    std::vector<Expr> guards = spatial_guards;
    Stmt body = WrapGuards(guards, Store::Make(t.buffer, index, element));
    for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) body = WrapLoop(axes[*it], body);
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
  Expr acc = Load::Make(t.buffer, index);
  Stmt update = WrapGuards(all_guards,
                           Store::Make(t.buffer, index, ReduceCombine(t.reduce, acc, element)));
  Stmt init = WrapGuards(spatial_guards,
                         Store::Make(t.buffer, index, ReduceInit(t.reduce, t.dtype)));
  for (size_t p = leaves.size(); p-- > first_reduce;) {
    update = WrapLoop(axes[leaves[p]], update);
    if (!axes[leaves[p]].is_reduce) init = WrapLoop(axes[leaves[p]], init);
  }
  Stmt body = Block::Make({init, update});
  for (size_t p = first_reduce; p-- > 0;) body = WrapLoop(axes[leaves[p]], body);
  return body;
}

}  // namespace cinn_like::ir
