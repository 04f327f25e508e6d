/// \file The x86 row-group tactic.
#include "hlir/group_schedule/cpu_row_tactic.h"

#include "absl/strings/str_cat.h"
#include "hlir/group_schedule/schedule_util.h"

namespace cinn_like::hlir {

absl::StatusOr<TacticChoice> CpuRowGroup(ir::Schedule& sch, const ReductionGroup& g,
                                         const ir::Target& target) {
  ir::Stage& consumer = *g.consumer;
  const int lanes = FloatLanes(target);
  auto leaves = SplitRowLeaves(consumer, g.row_dims);
  if (!leaves.ok()) return leaves.status();
  const std::vector<ir::Var>& rows = leaves->rows;
  const std::vector<ir::Var>& cols = leaves->cols;
  const int64_t num_rows = StaticExtent(consumer, rows);
  auto row = FuseAll(consumer, rows);
  if (!row.ok()) return row.status();
  absl::Status st;
  std::string vector;
  if (!cols.empty()) {
    auto col = FuseAll(consumer, cols);
    if (!col.ok()) return col.status();
    const int64_t n = StaticExtent(consumer, {*col});
    if (const int width = LanesDividing(n, lanes); width >= 4) {
      auto v = consumer.Vectorize(*col, width);
      if (!v.ok()) return v.status();
      vector = absl::StrCat(", the row's ", n, " outputs in vectors of ", width);
    }
  }
  if (target.has_parallel_loops() && num_rows != 1) {
    st = consumer.Parallel(*row);
    if (!st.ok()) return st;
  }
  // Consumers first: a reduction read by another (softmax's max by its sum) is attached after
  // its reader, so that the reader's loads count in its region.
  int64_t extent = -1;
  for (auto it = g.reductions.rbegin(); it != g.reductions.rend(); ++it) {
    ir::Stage& r = **it;
    st = r.ComputeAt(consumer, *row);
    if (!st.ok()) return st;
    Leaves l = SplitLeaves(r);
    if (l.reduce.empty()) continue;
    extent = StaticExtent(r, {l.reduce.back()});
    const int width = extent >= 8 * lanes ? 4 * lanes : lanes;
    if (extent >= 2 * width) {
      auto v = r.Vectorize(l.reduce.back(), width);
      if (!v.ok()) return v.status();
    }
  }
  return TacticChoice{
      consumer.tensor()->name, "cpu.row_group",
      absl::StrCat(num_rows < 0 ? std::string("symbolic") : absl::StrCat(num_rows), " rows",
                   target.has_parallel_loops() && num_rows != 1 ? " on the thread pool" : "", ", ",
                   g.reductions.size(),
                   " reduction(s) computed per row while it is in "
                   "cache (rows of ",
                   extent < 0 ? std::string("symbolic") : absl::StrCat(extent), ")", vector)};
}

}  // namespace cinn_like::hlir
