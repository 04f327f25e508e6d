/// \file The x86 row-group tactic.
#include "hlir/group_schedule/cpu_row_tactic.h"

#include "absl/strings/str_cat.h"
#include "hlir/group_schedule/schedule_util.h"

namespace cinn_like::hlir {

absl::StatusOr<TacticChoice> CpuRowGroup(ir::Schedule& sch, const ReductionGroup& g,
                                         const ir::Target& target) {
  ir::Stage& consumer = *g.consumer;
  const int lanes = FloatLanes(target);
  auto leaves = FuseRows(consumer, g.row_dims);
  if (!leaves.ok()) return leaves.status();
  const ir::Var& row = leaves->row;
  const int64_t num_rows = leaves->num_rows;
  const std::vector<ir::Var>& cols = leaves->cols;
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
    st = consumer.Parallel(row);
    if (!st.ok()) return st;
  }
  // Consumers first: a reduction read by another (softmax's max by its sum) is attached after
  // its reader, so that the reader's loads count in its region.
  for (auto it = g.reductions.rbegin(); it != g.reductions.rend(); ++it) {
    st = (*it)->ComputeAt(consumer, row);
    if (!st.ok()) return st;
    auto width = VectorizeRowReduce(**it, target);
    if (!width.ok()) return width.status();
  }
  return TacticChoice{
      consumer.tensor()->name, "cpu.row_group",
      absl::StrCat(CountText(num_rows), " rows",
                   target.has_parallel_loops() && num_rows != 1 ? " on the thread pool" : "", ", ",
                   g.reductions.size(),
                   " reduction(s) computed per row while it is in cache (rows of ",
                   CountText(ReduceExtent(*g.reductions[0])), ")", vector)};
}

}  // namespace cinn_like::hlir
