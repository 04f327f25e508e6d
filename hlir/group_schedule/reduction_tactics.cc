/// \file GPU tactics for reductions fused with their consumer.
#include "hlir/group_schedule/reduction_tactics.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "hlir/group_schedule/schedule_util.h"

namespace cinn_like::hlir {

absl::StatusOr<TacticChoice> ThreadPerElement(ir::Schedule& sch, const ReductionGroup& g,
                                              const ir::Target& target, std::string why) {
  ir::Stage& consumer = *g.consumer;
  auto fused = FuseAll(consumer, LeafVars(consumer));
  if (!fused.ok()) return fused.status();
  absl::Status st = BindBlocksAndThreads(consumer, *fused, kBlockThreads);
  if (!st.ok()) return st;
  auto thread = consumer.LeafAxis(1);  // the threadIdx.x half of the split
  if (!thread.ok()) return thread.status();
  for (auto it = g.reductions.rbegin(); st.ok() && it != g.reductions.rend(); ++it) {
    st = (*it)->ComputeAt(consumer, *thread);
  }
  if (!st.ok()) return st;
  return TacticChoice{consumer.tensor()->name, "reduction.thread_per_element", std::move(why)};
}

namespace {

/// Each reduction of `g` computed at the consumer's loop `row` into a local buffer, its reduce
/// axes split by `threads` over threadIdx.x (in vectors of `lanes`, BindVectorsToThreads):
/// each thread keeps its own copy of its row's result (the cross-thread combine leaves it in
/// every thread), so no shared memory and no barrier; each row output computed there too, into
/// its own buffer, and each element output, its elements split over the threads as the
/// consumer's columns are (each thread then reads back what it stored itself). Consumers
/// first: a stage read by another (softmax's max by its sum, a LayerNorm's mean by its
/// variance) is attached after its reader, so that the reader's loads count in its region.
absl::Status ReduceAtRow(ir::Schedule& sch, const ReductionGroup& g, const ir::Var& row,
                         int threads, int lanes = 0) {
  std::vector<ir::Stage*> stages = g.reductions;  // with the outputs, in schedule order
  stages.insert(stages.end(), g.row_outputs.begin(), g.row_outputs.end());
  stages.insert(stages.end(), g.element_outputs.begin(), g.element_outputs.end());
  std::map<const ir::Stage*, size_t> order;
  for (const auto& s : sch.stages()) order.emplace(s.get(), order.size());
  std::sort(stages.begin(), stages.end(),
            [&](const ir::Stage* a, const ir::Stage* b) { return order[a] < order[b]; });
  const std::set<const ir::Stage*> outputs(g.row_outputs.begin(), g.row_outputs.end());
  const std::set<const ir::Stage*> elements(g.element_outputs.begin(), g.element_outputs.end());
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    if (outputs.count(*it) || elements.count(*it)) {
      absl::Status st = (*it)->ComputeAtOwnBuffer(*g.consumer, row);
      if (!st.ok()) return st;
      if (elements.count(*it)) {
        const std::vector<ir::Var> leaves = LeafVars(**it);
        const std::vector<ir::Var> cols(leaves.begin() + g.row_dims, leaves.end());
        st = BindVectorsToThreads(**it, cols, threads, lanes);
        if (!st.ok()) return st;
      }
      continue;
    }
    ir::Tensor t = (*it)->tensor();
    auto cache = sch.CacheWrite(t, "local");
    if (!cache.ok()) return cache.status();
    absl::Status st = sch[t].ComputeInline();
    if (!st.ok()) return st;
    ir::Stage& c = sch[*cache];
    st = c.ComputeAt(*g.consumer, row);
    if (!st.ok()) return st;
    st = BindVectorsToThreads(c, SplitLeaves(c).reduce, threads, lanes);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TacticChoice> WarpPerRow(ir::Schedule& sch, const ReductionGroup& g,
                                        const ir::Target& target, int rows_per_block, int lanes,
                                        std::string why) {
  ir::Stage& consumer = *g.consumer;
  const int warp = target.warp_size();
  // The innermost row dim split into blocks of rows_per_block rows (threadIdx.y); the outer
  // row dims and the blocks fused into blockIdx.x. A block's rows differ only in the split's
  // inner part, so each reduction's row stays an affine index of the threads.
  const std::vector<ir::Var> axes = LeafVars(consumer);
  std::vector<ir::Var> cols(axes.begin() + g.row_dims, axes.end());
  auto row_parts = consumer.Split(axes[g.row_dims - 1], rows_per_block);
  if (!row_parts.ok()) return row_parts.status();
  std::vector<ir::Var> blocks(axes.begin(), axes.begin() + g.row_dims - 1);
  blocks.push_back(row_parts->first);
  auto block = FuseAll(consumer, blocks);
  if (!block.ok()) return block.status();
  absl::Status st = consumer.Bind(*block, "blockIdx.x");
  if (st.ok()) st = consumer.Bind(row_parts->second, "threadIdx.y");
  if (st.ok()) st = BindVectorsToThreads(consumer, cols, warp, lanes);
  if (st.ok()) st = ReduceAtRow(sch, g, row_parts->second, warp, lanes);
  if (!st.ok()) return st;
  return TacticChoice{consumer.tensor()->name, "row_reduction.warp_per_row", std::move(why)};
}

absl::StatusOr<TacticChoice> BlockPerRow(ir::Schedule& sch, const ReductionGroup& g,
                                         const ir::Target& target, int lanes) {
  ir::Stage& consumer = *g.consumer;
  const int64_t reduce_extent = ReduceExtent(*g.reductions[0]);
  int threads = RowThreads(reduce_extent, target);
  // A long row read one element at a time (no vectors: a 50257-word vocabulary's row) takes a
  // block of 1024 threads: 256 keep too few loads in flight. On the H200, a loss backward's
  // [1024, 50257] floats read and written by handwritten row kernels: 230 us with 256 threads,
  // 176 with 512, 159 with 1024 (a flat float4 kernel: 113).
  if (lanes <= 1 && reduce_extent >= kLongScalarRow) {
    threads = std::min(1024, target.max_threads_per_block());
  }
  auto leaves = FuseRows(consumer, g.row_dims);
  if (!leaves.ok()) return leaves.status();
  absl::Status st = consumer.Bind(leaves->row, "blockIdx.x");
  if (st.ok()) st = BindVectorsToThreads(consumer, leaves->cols, threads, lanes);
  if (st.ok()) st = ReduceAtRow(sch, g, leaves->row, threads, lanes);
  if (!st.ok()) return st;
  return TacticChoice{
      consumer.tensor()->name, "row_reduction.block_per_row",
      absl::StrCat(CountText(leaves->num_rows), " rows of ", CountText(reduce_extent),
                   " elements, ", g.reductions.size(), " reduction(s) in each thread's registers, ",
                   threads, " threads per row",
                   lanes > 1 ? absl::StrCat(", ", lanes, "-element vectors per thread") : "")};
}

}  // namespace cinn_like::hlir
