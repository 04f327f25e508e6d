/// \file How large a stage's element grows when the stages it reads are inlined: the graph
/// compiler inlines every non-reduction stage of a GPU group, and a producer read at several
/// indices (a clamp's min and max, a gather's index) is copied into each, so chains of them
/// grow exponentially; past a budget a stage is materialized instead.
#pragma once

#include <map>
#include <vector>

#include "ir/schedule.h"

namespace cinn_like::hlir {

/// The inlined size of the stages decided so far, producers first.
class InlineSizes {
 public:
  /// Expression nodes past which a stage is materialized rather than inlined.
  static constexpr double kBudget = 1 << 14;

  /// The node count of `stage`'s element with every stage recorded by Inline substituted: a
  /// load of one costs its inlined size plus, for each of its axes, the index's size times
  /// the axis' uses in it. Saturating arithmetic (doubles); the walk is linear in the body.
  double Estimate(const ir::Stage& stage) const;
  /// Records `stage` as inlined (after Estimate said it fits).
  void Inline(const ir::Stage& stage);

  /// An expression's node count and the uses of each variable in it.
  struct Size {
    double nodes = 0;
    std::map<const ir::Variable*, double> uses;
  };
  /// An inlined stage: its element's node count and the uses of each of its root axes.
  struct Inlined {
    double nodes;
    std::vector<double> axis_uses;
  };

 private:
  Size Of(const ir::Stage& stage) const;
  std::map<const ir::BufferNode*, Inlined> inlined_;
};

}  // namespace cinn_like::hlir
