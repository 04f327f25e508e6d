/// \file GPU tactics for reductions fused with their consumer.
#include "hlir/group_schedule/reduction_tactics.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "hlir/group_schedule/schedule_util.h"
#include "ir/structural_equal.h"

namespace cinn_like::hlir {

absl::StatusOr<TacticChoice> ThreadPerElement(ir::Schedule& sch, const ReductionGroup& g,
                                              const ir::Target& target, std::string why) {
  ir::Stage& consumer = *g.consumer;
  auto fused = FuseAll(consumer, LeafVars(consumer));
  if (!fused.ok()) return fused.status();
  auto parts = consumer.Split(*fused, RowThreads(-1, target));
  if (!parts.ok()) return parts.status();
  absl::Status st = consumer.Bind(parts->first, "blockIdx.x");
  if (st.ok()) st = consumer.Bind(parts->second, "threadIdx.x");
  for (auto it = g.reductions.rbegin(); st.ok() && it != g.reductions.rend(); ++it) {
    st = (*it)->ComputeAt(consumer, parts->second);
  }
  if (!st.ok()) return st;
  return TacticChoice{consumer.tensor()->name, "reduction.thread_per_element", std::move(why)};
}

namespace {

/// Each reduction of `g` computed into a `scope` buffer at the consumer's loop `row`, its reduce
/// axes split by `threads` over threadIdx.x. Consumers first: a reduction read by another
/// (softmax's max by its sum) is attached after its reader, so that the reader's loads count
/// in its region. With `rows_on_y`, `row` is bound to threadIdx.y: the region spans the
/// block's rows, and its row axes go on threadIdx.y too (each warp reduces its own row).
/// With scope "local" each thread keeps its own copy of its row's result (the cross-thread
/// combine leaves it in every thread): no shared memory and no barrier.
absl::Status ReduceAtRow(ir::Schedule& sch, const ReductionGroup& g, const ir::Var& row,
                         int threads, bool rows_on_y = false, bool unroll = false,
                         const std::string& scope = "shared") {
  for (auto it = g.reductions.rbegin(); it != g.reductions.rend(); ++it) {
    ir::Tensor t = (*it)->tensor();
    auto cache = sch.CacheWrite(t, scope);
    if (!cache.ok()) return cache.status();
    absl::Status st = sch[t].ComputeInline();
    if (!st.ok()) return st;
    ir::Stage& c = sch[*cache];
    st = c.ComputeAt(*g.consumer, row);
    if (!st.ok()) return st;
    std::vector<ir::Var> reduce, spatial;
    for (int l : c.leaves()) (c.axes()[l].is_reduce ? reduce : spatial).push_back(c.axes()[l].var);
    if (rows_on_y && !spatial.empty()) {
      auto rows = FuseAll(c, spatial);
      if (!rows.ok()) return rows.status();
      st = c.Bind(*rows, "threadIdx.y");
      if (!st.ok()) return st;
    }
    if (reduce.empty()) continue;
    auto r = FuseAll(c, reduce);
    if (!r.ok()) return r.status();
    auto parts = c.Split(*r, threads);
    if (!parts.ok()) return parts.status();
    st = c.Bind(parts->second, "threadIdx.x");
    if (st.ok() && unroll) st = c.Unroll(parts->first);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

std::string CountText(int64_t n) { return n < 0 ? std::string("symbolic") : absl::StrCat(n); }

}  // namespace

absl::StatusOr<TacticChoice> WarpPerRow(ir::Schedule& sch, const ReductionGroup& g,
                                        const ir::Target& target, int rows_per_block,
                                        std::string why) {
  ir::Stage& consumer = *g.consumer;
  const int warp = target.warp_size();
  std::vector<ir::Var> axes = LeafVars(consumer);
  std::vector<ir::Var> rows(axes.begin(), axes.begin() + g.row_dims);
  std::vector<ir::Var> cols(axes.begin() + g.row_dims, axes.end());
  auto row = FuseAll(consumer, rows);
  if (!row.ok()) return row.status();
  auto row_parts = consumer.Split(*row, rows_per_block);
  if (!row_parts.ok()) return row_parts.status();
  absl::Status st = consumer.Bind(row_parts->first, "blockIdx.x");
  if (st.ok()) st = consumer.Bind(row_parts->second, "threadIdx.y");
  if (!st.ok()) return st;
  if (!cols.empty()) {
    auto col = FuseAll(consumer, cols);
    if (!col.ok()) return col.status();
    auto parts = consumer.Split(*col, warp);
    if (!parts.ok()) return parts.status();
    st = consumer.Bind(parts->second, "threadIdx.x");
    if (!st.ok()) return st;
  }
  // Each lane keeps its row's results in registers (the shuffles leave them in every lane).
  st = ReduceAtRow(sch, g, row_parts->second, warp, /*rows_on_y=*/false, /*unroll=*/false, "local");
  if (!st.ok()) return st;
  return TacticChoice{consumer.tensor()->name, "row_reduction.warp_per_row", std::move(why)};
}

absl::StatusOr<TacticChoice> BlockPerRow(ir::Schedule& sch, const ReductionGroup& g,
                                         const ir::Target& target) {
  ir::Stage& consumer = *g.consumer;
  const int64_t reduce_extent = ReduceExtent(*g.reductions[0]);
  const int threads = RowThreads(reduce_extent, target);
  auto leaves = SplitRowLeaves(consumer, g.row_dims);
  if (!leaves.ok()) return leaves.status();
  const std::vector<ir::Var>& rows = leaves->rows;
  const std::vector<ir::Var>& cols = leaves->cols;
  const int64_t num_rows = StaticExtent(consumer, rows);
  auto row = FuseAll(consumer, rows);
  if (!row.ok()) return row.status();
  absl::Status st = consumer.Bind(*row, "blockIdx.x");
  if (!st.ok()) return st;
  if (!cols.empty()) {
    auto col = FuseAll(consumer, cols);
    if (!col.ok()) return col.status();
    auto parts = consumer.Split(*col, threads);
    if (!parts.ok()) return parts.status();
    st = consumer.Bind(parts->second, "threadIdx.x");
    if (!st.ok()) return st;
  }
  // Every thread keeps the row's results in registers: the block reduce leaves them in all.
  st = ReduceAtRow(sch, g, *row, threads, /*rows_on_y=*/false, /*unroll=*/false, "local");
  if (!st.ok()) return st;
  return TacticChoice{
      consumer.tensor()->name, "row_reduction.block_per_row",
      absl::StrCat(CountText(num_rows), " rows of ", CountText(reduce_extent), " elements, ",
                   g.reductions.size(), " reduction(s) in each thread's registers, ", threads,
                   " threads per row")};
}

}  // namespace cinn_like::hlir
