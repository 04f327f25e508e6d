/// \file The values of a stage's axes in its leaf loop variables.
#include "ir/schedule_axes.h"

namespace cinn_like::ir {

std::vector<Expr> AxisValues(const Stage& stage) {
  const auto& axes = stage.axes();
  std::vector<Expr> value(axes.size());
  for (int leaf : stage.leaves()) value[leaf] = axes[leaf].var;
  for (auto it = stage.relations().rbegin(); it != stage.relations().rend(); ++it) {
    const Stage::Relation& r = *it;
    if (r.kind == Stage::Relation::Kind::kSplit) {
      value[r.parent] = value[r.outer] * r.factor + value[r.inner];
    } else {
      Expr inner_extent = axes[r.inner].extent;
      value[r.outer] = value[r.fused] / inner_extent;
      value[r.inner] = value[r.fused] % inner_extent;
    }
  }
  return value;
}

VarMap BodyRootValues(const Stage& stage, const std::vector<Expr>& values) {
  VarMap root;
  const Stage::Attach* at = stage.attach();
  for (int a = 0; a < stage.num_root_axes(); ++a) {
    Expr v = values[a];
    if (at && a < stage.rank()) {
      v = at->min[a] + (at->stride[a] == 1 ? v : v * IndexConst(at->stride[a]));
    }
    root[stage.axes()[a].var.node()] = v;
  }
  return root;
}

Expr ElementInLeafVars(const Stage& stage) {
  return Substitute(stage.InlinedBody(), BodyRootValues(stage, AxisValues(stage)));
}

}  // namespace cinn_like::ir
