/// \file Tactics for stages scheduled alone, on CPUs and GPUs.
#include "hlir/group_schedule/stage_tactics.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "hlir/group_schedule/matmul_tactic.h"
#include "hlir/group_schedule/schedule_util.h"
#include "ir/buffer_reads.h"
#include "ir/device_properties.h"

namespace cinn_like::hlir {
namespace {

/// CPU stages with this much work (outputs times the elements each reduces), or symbolic, run
/// their outermost loop on the thread pool.
constexpr int64_t kParallelMinElements = 4096;

/// A CPU column reduction streams the rows: the contiguous output axis is split into chunks
/// of `lanes` columns, the reduce loops run inside each chunk and the chunk's columns innermost
/// as one vector (accumulators for `lanes` columns, rows read contiguously), the chunks on the
/// thread pool. Null when the innermost output axis is symbolic or no multiple of 8.
/// Chunks are four vector registers wide where the columns allow, else one.
absl::StatusOr<std::optional<TacticChoice>> CpuColumns(ir::Stage& s, const ir::Target& target) {
  Leaves l = SplitLeaves(s);
  if (l.spatial.empty() || l.reduce.empty()) return std::nullopt;
  const int64_t n = StaticExtent(s, {l.spatial.back()});
  const int base = FloatLanes(target);
  const int lanes = n > 0 && n % (4 * base) == 0 ? 4 * base : LanesDividing(n, base);
  if (lanes < 8) return std::nullopt;
  auto parts = s.Split(l.spatial.back(), lanes);
  if (!parts.ok()) return parts.status();
  std::vector<ir::Var> order = {parts->first};
  order.insert(order.end(), l.reduce.begin(), l.reduce.end());
  order.push_back(parts->second);
  absl::Status st = s.Reorder(order);
  if (st.ok()) st = s.Vectorize(parts->second);
  if (!st.ok()) return st;
  std::vector<ir::Var> outer(l.spatial.begin(), l.spatial.end() - 1);
  outer.push_back(parts->first);
  auto fused = FuseAll(s, outer);
  if (!fused.ok()) return fused.status();
  const int64_t chunks = StaticExtent(s, {*fused});
  if (target.has_parallel_loops() && chunks != 1) {
    st = s.Parallel(*fused);
    if (!st.ok()) return st;
  }
  return TacticChoice{s.tensor()->name, "cpu.column_reduction_streams_rows",
                      absl::StrCat("columns of ", n, " in chunks of ", lanes,
                                   " accumulated as vectors while the rows stream past, ",
                                   CountText(chunks), " chunks on the thread pool")};
}

absl::StatusOr<TacticChoice> ScheduleCpu(ir::Stage& s, StageKind kind, const ir::Target& target,
                                         int knob) {
  TacticChoice c{s.tensor()->name, "cpu.serial", "no spatial loop"};
  std::string vector;
  if (kind == StageKind::kReduction && IsColumnReduction(s)) {
    auto columns = CpuColumns(s, target);
    if (!columns.ok()) return columns.status();
    if (*columns) return **columns;
  } else if (kind == StageKind::kReduction) {
    auto width = VectorizeRowReduce(s, target);
    if (!width.ok()) return width.status();
    if (*width > 0) {
      vector =
          absl::StrCat(", rows of ", CountText(ReduceExtent(s)), " reduced in vectors of ", *width);
    }
  }
  Leaves l = SplitLeaves(s);
  // One vector register of float32 lanes (8 on AVX2, 16 on AVX-512), whatever the dtype.
  const int lanes = FloatLanes(target);
  if (l.spatial.empty()) {
    c.why = absl::StrCat("no spatial loop", vector);
    return c;
  }
  int64_t total = StaticExtent(s, l.spatial);
  ir::Var outer = l.spatial[0];
  if (kind == StageKind::kElementwise) {
    int64_t inner = StaticExtent(s, {l.spatial.back()});
    if (const int own = LanesDividing(inner, lanes); own >= 4) {
      // The tuner may take two registers per vector, or half of one.
      std::vector<int> widths{own};
      for (int w : {LanesDividing(inner, 2 * lanes), LanesDividing(inner, lanes / 2)}) {
        if (w >= 4) widths.push_back(w);
      }
      const int width = ChooseKnob(&c.knob, "vector_lanes", widths, knob);
      auto v = s.Vectorize(l.spatial.back(), width);
      if (!v.ok()) return v.status();
      if (l.spatial.size() == 1) outer = *s.LeafAxis(0);
      vector = absl::StrCat(", inner loop of ", inner, " vectorized by ", width);
    }
  }
  // Work, not outputs, decides: a row reduction of 2048 rows of 2048 is worth the pool.
  const int64_t reduce = kind == StageKind::kElementwise ? 1 : ReduceExtent(s);
  const bool parallel =
      target.has_parallel_loops() &&
      (total < 0 || reduce < 0 ||
       (total >= 2 && total * std::max<int64_t>(reduce, 1) >= kParallelMinElements));
  if (parallel) {
    absl::Status st = s.Parallel(outer);
    if (!st.ok()) return st;
  }
  c.tactic = parallel ? "cpu.parallel_outer" : "cpu.serial";
  c.why = absl::StrCat(CountText(total), " outputs",
                       reduce > 1 ? absl::StrCat(" of ", reduce, " elements each") : "",
                       parallel ? " (4096 or more: thread pool)" : "", vector);
  return c;
}

/// The rows of a chunk of a column reduction's reduce axis where sizes are symbolic
/// (TwoStageColumns): every block then reduces 256 rows of 256 columns whatever the sizes, the
/// chunk loop has a constant trip count, and the partials cost one value per column every 256
/// rows. 8192 rows are 32 chunks, the static tactic's choice for 8192 columns on 132 SMs when
/// this was measured (a fixed 16 chunks of symbolic length: 1.15-1.24x the static kernel on an
/// H100); the static tactic has since taken 16 (BlocksToFill), and this has not been measured
/// again. The chunks share blockIdx.x with the columns' blocks (blockIdx.y stops at 65535).
constexpr int kSymbolicChunkRows = 256;

/// A column reduction's partial (TwoStageColumns) unrolls its chunk's rows up to this many, and
/// its final sum the partials up to this many.
constexpr int64_t kUnrollChunkRows = 32;

/// A GPU row reduction's thread unrolls its loop over its vectors up to this many.
constexpr int64_t kUnrollVectors = 16;

/// Blocks of a column reduction's partials that fill the device: two per multiprocessor (the
/// split below stops at the first power of two of chunks reaching it). Longer chunks keep each
/// thread streaming down its column longer: on an H200 (132 SMs), the sum over dim 0 of 8192^2
/// floats took 0.0707 ms in 32 chunks (1024 blocks, about eight per multiprocessor), 0.0662 in
/// 16 and 0.0681 in 8 (CUDA events over launches back to back).
int64_t BlocksToFill(const ir::Target& target) {
  return 2 * static_cast<int64_t>(ir::DevicePropertiesOf(target).multiprocessors);
}

/// Unrolls each reduce loop of `s` longer than one.
absl::Status UnrollReduceLoops(ir::Stage& s) {
  for (const ir::Var& r : SplitLeaves(s).reduce) {
    if (StaticExtent(s, {r}) <= 1) continue;
    if (absl::Status st = s.Unroll(r); !st.ok()) return st;
  }
  return absl::OkStatus();
}

/// A column reduction with too few outputs to fill the device (Inductor's and CINN's split
/// reduction): its outermost reduce axis split into `parts` chunks, a first kernel reducing
/// each chunk of each column (threads over the columns, chunks on blockIdx.y) into partials,
/// a second reducing each column's partials; both in a fixed order (deterministic, no
/// atomics). Null when the columns fill the device alone or the axis does not split evenly
/// into chunks of at least 32 rows; with symbolic sizes, chunks of kSymbolicChunkRows rows.
/// Over several static reduce axes the longest one is split (a norm's weight gradient sums
/// [batch, tokens]: the batch of 4 would not split), a chunk's rows counting all of them.
absl::StatusOr<std::optional<TacticChoice>> TwoStageColumns(ir::Schedule& sch, ir::Stage& s,
                                                            const ir::Target& target, int knob) {
  Leaves l = SplitLeaves(s);
  if (l.spatial.empty() || l.reduce.empty()) return std::nullopt;
  const int64_t outputs = StaticExtent(s, l.spatial);
  const int64_t all_rows = StaticExtent(s, l.reduce);
  ir::Var axis = l.reduce[0];
  if (all_rows > 0) {
    for (const ir::Var& r : l.reduce) {
      if (StaticExtent(s, {r}) > StaticExtent(s, {axis})) axis = r;
    }
  }
  const int64_t k = StaticExtent(s, {axis});
  const int64_t other_rows = all_rows > 0 ? all_rows / k : 1;  // per row of `axis`'s chunk
  const int64_t blocks = outputs > 0 ? (outputs + kBlockThreads - 1) / kBlockThreads : -1;
  const int64_t want = BlocksToFill(target);
  int parts = 1;
  std::vector<int> options;
  if (outputs == 0 || k == 0) return std::nullopt;
  const bool symbolic = outputs < 0 || k < 0;
  if (symbolic) {
    // Symbolic sizes: how many blocks the columns fill is known only at the call. Chunks of
    // kSymbolicChunkRows rows (the last one partial, guarded), as many as the rows make,
    // unless the reduce axis is known to be one chunk or the columns known to fill the device
    // alone. The tuner may take half or twice the rows.
    if ((k > 0 && k <= kSymbolicChunkRows) || (blocks > 0 && blocks >= want)) {
      return std::nullopt;
    }
    options = {kSymbolicChunkRows, kSymbolicChunkRows / 2, kSymbolicChunkRows * 2};
  } else {
    auto splits = [&](int n) { return k % n == 0 && k / n * other_rows >= 32; };
    while (blocks * parts < want && splits(parts * 2)) parts *= 2;
    if (parts == 1) return std::nullopt;
    // The tuner may take twice as many chunks (more blocks in flight), or half.
    options = {parts};
    if (splits(parts * 2)) options.push_back(parts * 2);
    if (parts >= 4) options.push_back(parts / 2);
  }
  std::optional<TuningKnob> chosen;
  const int choice =
      ChooseKnob(&chosen, symbolic ? "column_chunk_rows" : "column_chunks", options, knob);
  auto split = symbolic ? s.Split(axis, choice) : s.SplitNParts(axis, choice);
  if (!split.ok()) return split.status();
  if (!symbolic) parts = choice;
  const ir::Tensor out = s.tensor();
  auto rf = sch.Rfactor(out, split->first);
  if (!rf.ok()) return rf.status();
  // The partials: [chunk, columns...], chunks on blockIdx.y, columns over blocks of threads.
  ir::Stage& partial = sch[*rf];
  Leaves pl = SplitLeaves(partial);
  auto cols = FuseAll(partial, std::vector<ir::Var>(pl.spatial.begin() + 1, pl.spatial.end()));
  if (!cols.ok()) return cols.status();
  absl::Status st;
  if (symbolic) {
    // As many chunks as the rows make: with the columns' blocks on blockIdx.x (up to 2^31 - 1
    // blocks; blockIdx.y would stop at 65535 chunks, 2^24 rows).
    auto parts = partial.Split(*cols, kBlockThreads);
    if (!parts.ok()) return parts.status();
    auto blocks = partial.Fuse(pl.spatial[0], parts->first);
    if (!blocks.ok()) return blocks.status();
    st = partial.Bind(*blocks, "blockIdx.x");
    if (st.ok()) st = partial.Bind(parts->second, "threadIdx.x");
  } else {
    st = BindBlocksAndThreads(partial, *cols, kBlockThreads);
    if (st.ok()) st = partial.Bind(pl.spatial[0], "blockIdx.y");
    // A chunk of few rows is unrolled, so that a thread has all its loads in flight at once:
    // with few columns (a norm's weight gradient, 768) the partials fill less than a wave.
    // GPT-2's LayerNorm weight and bias gradients (96 blocks of 256, 32 rows a thread): 9.9 us
    // a launch, 12% occupancy, 88% of stalls waiting on loads (ncu, H200); unrolled, 6 us.
    if (st.ok() && all_rows / parts <= kUnrollChunkRows) st = UnrollReduceLoops(partial);
  }
  if (!st.ok()) return st;
  // The final sum of each column's partials, a thread per column.
  ir::Stage& final_stage = sch[out];
  auto fused = FuseAll(final_stage, SplitLeaves(final_stage).spatial);
  if (!fused.ok()) return fused.status();
  st = BindBlocksAndThreads(final_stage, *fused, kBlockThreads);
  // Its partials' loads all in flight at once, as the chunk's rows are.
  if (st.ok() && !symbolic && parts <= kUnrollChunkRows) st = UnrollReduceLoops(final_stage);
  if (!st.ok()) return st;
  const std::string why =
      outputs > 0 && k > 0
          ? absl::StrCat(outputs, " columns fill ", blocks, " blocks of ", kBlockThreads, " (< ",
                         want, " for ", ir::DevicePropertiesOf(target).multiprocessors,
                         " SMs): the reduce axis of ", k, " split into ", parts, " chunks of ",
                         k / parts, ", partials then their sum (deterministic)")
          : absl::StrCat(CountText(outputs), " columns, a reduce axis of ", CountText(k),
                         ": split into chunks of ", choice,
                         " rows (symbolic sizes), partials then their sum (deterministic)");
  TacticChoice c{out->name, "column_reduction.two_stage", why};
  c.knob = chosen;
  return c;
}

absl::StatusOr<TacticChoice> ScheduleGpu(ir::Schedule& sch, ir::Stage& s, StageKind kind,
                                         const ir::Target& target, int knob, bool warp_rows);

/// A GPU row reduction is split across blocks (TwoStageRows) only where each row has at least
/// this many elements, and each chunk at least kSplitRowChunkMin.
constexpr int64_t kSplitRowMin = 16384;
constexpr int64_t kSplitRowChunkMin = 4096;

/// Whether a reduce axis of k iterations, of rows of `extent` elements, splits into n chunks of
/// kSplitRowChunkMin or more elements.
bool SplitsEvenly(int64_t k, int64_t extent, int64_t n) {
  return k % n == 0 && extent / n >= kSplitRowChunkMin;
}

/// How TwoStageRows splits row reduction `s`: the first reduce axis that splits evenly into
/// chunks of at least kSplitRowChunkMin elements, into `parts` chunks (a power of two, while the
/// rows times the parts leave the device unfilled). Null where the rows fill the device, the
/// sizes are symbolic, a row is shorter than kSplitRowMin, or no axis splits (a row of 50257).
struct RowSplit {
  int64_t rows, extent;
  ir::Var axis;
  int64_t axis_extent;
  int parts;
};
std::optional<RowSplit> RowSplitOf(const ir::Stage& s, const ir::Target& target) {
  Leaves l = SplitLeaves(s);
  if (!target.is_gpu() || l.spatial.empty() || l.reduce.empty()) return std::nullopt;
  const int64_t rows = StaticExtent(s, l.spatial);
  const int64_t extent = StaticExtent(s, l.reduce);
  const int64_t want = BlocksToFill(target);
  if (rows <= 0 || extent < kSplitRowMin || rows >= want) return std::nullopt;
  for (const ir::Var& r : l.reduce) {
    const int64_t k = StaticExtent(s, {r});
    int parts = 1;
    while (rows * parts < want && SplitsEvenly(k, extent, parts * 2)) parts *= 2;
    if (parts > 1) return RowSplit{rows, extent, r, k, parts};
  }
  return std::nullopt;
}

}  // namespace

bool FewLongRows(const ir::Stage& s, const ir::Target& target, int64_t min_elements) {
  const std::optional<RowSplit> split = RowSplitOf(s, target);
  return split && split->rows * split->extent >= min_elements;
}

namespace {

/// A row reduction with too few rows to fill the device and long rows (a BatchNorm's sums per
/// channel over [N, H, W] in NCHW: resnet18's first 64 channels of 32 x 64 x 64 ran as 64
/// blocks on 132 SMs, about 0.2 ms for two sums over 33 MB), split as RowSplitOf says: a first
/// kernel reduces each chunk of each row into partials (a block per chunk and row, the row
/// tactic), a second sums each row's partials (a thread per row), in a fixed order
/// (deterministic, no atomics). Null where RowSplitOf is.
absl::StatusOr<std::optional<TacticChoice>> TwoStageRows(ir::Schedule& sch, ir::Stage& s,
                                                         const ir::Target& target, int knob,
                                                         bool warp_rows) {
  const std::optional<RowSplit> how = RowSplitOf(s, target);
  if (!how) return std::nullopt;
  const int64_t rows = how->rows, extent = how->extent, k = how->axis_extent;
  const int64_t want = BlocksToFill(target);
  const ir::Var axis = how->axis;
  int parts = how->parts;
  std::optional<TuningKnob> chosen;
  std::vector<int> options{parts};
  if (SplitsEvenly(k, extent, parts * 2)) options.push_back(parts * 2);
  if (parts >= 4) options.push_back(parts / 2);
  parts = ChooseKnob(&chosen, "row_chunks", options, knob);
  auto split = s.SplitNParts(axis, parts);
  if (!split.ok()) return split.status();
  const ir::Tensor out = s.tensor();
  auto rf = sch.Rfactor(out, split->first);
  if (!rf.ok()) return rf.status();
  // The partials [chunk, rows...]: rows * parts rows, which fill the device: the row tactic.
  auto partial = ScheduleGpu(sch, sch[*rf], StageKind::kReduction, target, /*knob=*/0, warp_rows);
  if (!partial.ok()) return partial.status();
  // The sum of each row's partials, a thread per row.
  ir::Stage& final_stage = sch[out];
  auto fused = FuseAll(final_stage, SplitLeaves(final_stage).spatial);
  if (!fused.ok()) return fused.status();
  absl::Status st = BindBlocksAndThreads(final_stage, *fused, kBlockThreads);
  if (!st.ok()) return st;
  TacticChoice c{
      out->name, "row_reduction.two_stage",
      absl::StrCat(rows, " rows (< ", want, " blocks for ",
                   ir::DevicePropertiesOf(target).multiprocessors, " SMs) of ", extent,
                   " elements: reduce axis ", axis.name(), " of ", k, " split into ", parts,
                   " chunks, partials (", partial->tactic, ") then their sum (deterministic)")};
  c.knob = chosen;
  return c;
}

/// Whether `body` only moves an element: a load, or a cast of one.
bool IsCopy(const ir::Expr& body) {
  if (body.As<ir::Load>()) return true;
  const ir::Cast* cast = body.As<ir::Cast>();
  return cast && cast->value.As<ir::Load>();
}

/// For a layout change scheduled as a tile per thread: each buffer of `strided` (loads the
/// tile reads across its lanes) that is an input of the kernel or a library call's result,
/// read by `s` alone (directly or through stages inlined into it), gets a local copy of one
/// thread's tile, computed at `s`'s thread loop `at` and loaded with vectors along its own
/// innermost axis. Returns the copied tensors' names, comma-separated (empty: none).
absl::StatusOr<std::string> CacheTilesInRegisters(ir::Schedule& sch, ir::Stage& s,
                                                  const std::vector<ir::Var>& axes,
                                                  const std::set<const ir::BufferNode*>& strided,
                                                  const ir::Var& at) {
  std::map<const ir::BufferNode*, ir::Tensor> inputs;
  std::set<const ir::BufferNode*> computed;  // by generated stages (a library call's are read)
  for (const auto& stage : sch.stages()) {
    if (!stage->tensor()->extern_body) computed.insert(stage->tensor()->buffer.get());
    for (const auto& in : stage->tensor()->inputs) inputs.emplace(in->buffer.get(), in);
  }
  std::string names;
  for (const ir::BufferNode* buffer : strided) {
    auto in = inputs.find(buffer);
    if (in == inputs.end() || computed.count(buffer) || !PermutedLoads(s, axes, buffer)) continue;
    std::vector<ir::Tensor> readers;
    bool elsewhere = false;
    for (const auto& stage : sch.stages()) {
      if (stage.get() != &s && !stage->inlined()) {
        elsewhere = elsewhere || stage->InlinedBodyReads(buffer);
      } else if (ir::Reads(stage->body(), {buffer})) {
        readers.push_back(stage->tensor());
      }
    }
    if (elsewhere) continue;
    auto local = sch.CacheRead(in->second, "local", readers);
    if (!local.ok()) return local.status();
    ir::Stage& l = sch[*local];
    absl::Status st = l.ComputeAt(s, at, /*thread_private=*/true);
    const std::vector<ir::Var> leaves = LeafVars(l);
    for (size_t i = 0; st.ok() && i + 1 < leaves.size(); ++i) st = l.Unroll(leaves[i]);
    if (st.ok()) st = l.Vectorize(leaves.back());
    if (!st.ok()) return st;
    absl::StrAppend(&names, names.empty() ? "" : ", ", in->second->name);
  }
  return names;
}

absl::StatusOr<TacticChoice> ScheduleGpu(ir::Schedule& sch, ir::Stage& s, StageKind kind,
                                         const ir::Target& target, int knob, bool warp_rows) {
  TacticChoice c{s.tensor()->name, "", ""};
  Leaves l = SplitLeaves(s);
  if (kind == StageKind::kReduction && !l.spatial.empty() && IsColumnReduction(s)) {
    auto two_stage = TwoStageColumns(sch, s, target, knob);
    if (!two_stage.ok()) return two_stage.status();
    if (*two_stage) return **two_stage;
    // Threads over the contiguous spatial axis, each reducing serially (coalesced loads).
    kind = StageKind::kMatmul;
    c.tactic = "column_reduction.thread_per_column";
    c.why = "the reduce axes are not the contiguous one: each thread reduces its column";
  } else if (kind == StageKind::kReduction && !l.spatial.empty() && !l.reduce.empty()) {
    const int64_t extent = StaticExtent(s, l.reduce);
    if (extent > 0 && extent <= kPerThreadMaxReduce) {
      kind = StageKind::kMatmul;
      c.tactic = "reduction.thread_per_element";
      c.why = absl::StrCat(extent, " elements per output (<= ", kPerThreadMaxReduce,
                           "): each thread reduces its own");
    }
  }
  if (kind != StageKind::kReduction) {
    if (l.spatial.empty()) {
      c.tactic = "gpu.single_thread";
      c.why = "no spatial axis";
      return c;
    }
    const int64_t total = StaticExtent(s, l.spatial);
    int64_t inner = StaticExtent(s, {l.spatial.back()});
    // One 128-bit vector per thread: 4 floats, 8 halves, 2 doubles, 16 bytes.
    const int bytes = s.tensor()->dtype.bytes();
    const int lanes = bytes > 0 ? target.vector_bytes() / bytes : 1;
    std::set<const ir::BufferNode*> strided;  // the loads' buffers along the transposed axis
    const int transposed =
        kind == StageKind::kElementwise ? TransposedAxis(s, l.spatial, &strided) : -1;
    const int second = static_cast<int>(l.spatial.size()) - 2;
    const int64_t across = transposed >= 0 ? StaticExtent(s, {l.spatial[transposed]}) : 0;
    if (transposed >= 0 && lanes >= 2 && inner > 0 && inner % lanes == 0 && across > 0 &&
        across % lanes == 0) {
      // A layout change as a tile of rows x lanes per thread: `rows` vectors of `lanes` along
      // the output's innermost axis, one per index of the axis innermost in the strided load,
      // so that a thread's loads of one input row are `rows` neighbouring elements and its
      // stores whole vectors; neighbouring threads take neighbouring vectors of the output's
      // innermost axis (whole lines stored together). A stage that computes more than a copy
      // takes half as many rows (the tuner may choose either): fewer registers, more threads
      // (H100, a float16 batch_norm + relu from NHWC into NCHW: 100 registers a thread with 8
      // rows, two blocks per multiprocessor, 15.2 us; 10.8 with 4 rows).
      const bool copy = IsCopy(s.InlinedBody());
      // Rows of at least 2 (2 doubles: one option) and tiles of at most 64 elements (16 x 16
      // bytes would be 256 registers' worth of a wider input).
      const int widest = std::max(2, std::min(lanes, 64 / lanes));
      std::vector<int> options{widest};
      if (widest / 2 >= 2) options.insert(copy ? options.end() : options.begin(), widest / 2);
      const int rows = ChooseKnob(&c.knob, "tile_rows", options, knob);
      auto vec = s.Split(l.spatial.back(), lanes);
      if (!vec.ok()) return vec.status();
      auto tile = s.Split(l.spatial[transposed], rows);
      if (!tile.ok()) return tile.status();
      std::vector<ir::Var> order;
      for (int a = 0; a + 1 < static_cast<int>(l.spatial.size()); ++a) {
        if (a != transposed) order.push_back(l.spatial[a]);
      }
      order.push_back(tile->first);
      order.push_back(vec->first);
      std::vector<ir::Var> outer = order;
      order.push_back(tile->second);
      order.push_back(vec->second);
      absl::Status st = s.Reorder(order);
      if (!st.ok()) return st;
      auto fused = FuseAll(s, outer);
      if (!fused.ok()) return fused.status();
      st = s.Unroll(tile->second);
      if (st.ok()) st = s.Vectorize(vec->second);
      if (st.ok()) st = BindBlocksAndThreads(s, *fused, kBlockThreads);
      if (!st.ok()) return st;
      std::string cached;
      if (total % (int64_t{kBlockThreads} * rows * lanes) == 0) {
        // Exact blocks (a thread's tile is read unguarded): each strided input's tile into the
        // thread's registers first, with vector loads along the input's own innermost axis.
        auto names = CacheTilesInRegisters(sch, s, l.spatial, strided, LeafVars(s)[1]);
        if (!names.ok()) return names.status();
        cached = *names;
      }
      c.tactic = "elementwise.tiled_layout_change";
      c.why = absl::StrCat(
          CountText(total), " outputs of ", bytes, " bytes, a load's innermost dim indexed by ",
          "output axis ", transposed, ": a tile of ", rows, " x ", lanes, " per thread (", rows,
          " vectors of ", lanes, " along the innermost axis, one per index of axis ", transposed,
          "), blocks of ", kBlockThreads,
          cached.empty() ? "" : absl::StrCat("; ", cached, " read into registers by vectors"));
      return c;
    }
    if (transposed >= 0 && transposed != second && lanes >= 2 && inner > 0 && inner % lanes == 0) {
      // A layout change: each thread still writes one vector of the output's innermost axis,
      // but neighbouring threads take neighbouring indices of the axis that is innermost in the
      // strided load, so that a warp's loads share lines (H100, a float16 NHWC -> NCHW
      // batch_norm + relu: 47 -> 18 us). Where that axis is already the second innermost
      // (NCHW -> NHWC), the usual order shares lines too and writes whole lines (14 us against
      // 18 reordered).
      auto parts = s.Split(l.spatial.back(), lanes);
      if (!parts.ok()) return parts.status();
      std::vector<ir::Var> order;
      for (int a = 0; a + 1 < static_cast<int>(l.spatial.size()); ++a) {
        if (a != transposed) order.push_back(l.spatial[a]);
      }
      order.push_back(parts->first);
      order.push_back(l.spatial[transposed]);
      absl::Status st = s.Reorder(order);
      if (!st.ok()) return st;
      auto fused = FuseAll(s, order);
      if (!fused.ok()) return fused.status();
      st = s.Vectorize(parts->second);
      if (st.ok()) st = BindBlocksAndThreads(s, *fused, kBlockThreads);
      if (!st.ok()) return st;
      c.tactic = "elementwise.vector_layout_change";
      c.why =
          absl::StrCat(total, " outputs of ", bytes, " bytes, a load's innermost dim indexed by ",
                       "output axis ", transposed, ": vectors of ", lanes,
                       " along the innermost axis, neighbouring threads along axis ", transposed,
                       ", blocks of ", kBlockThreads);
      return c;
    }
    auto fused = FuseAll(s, l.spatial);
    if (!fused.ok()) return fused.status();
    if (c.tactic.empty()) {
      c.tactic = kind == StageKind::kMatmul ? "matmul.thread_per_output" : "elementwise.scalar";
      c.why = absl::StrCat(CountText(total), " outputs over blocks of ", kBlockThreads);
    }
    // Vectors run along the fused axis, so they need only tile the whole extent: where the
    // innermost one is not a multiple (a vocabulary of 50257), an input of another shape (a
    // value per row) is read lane by lane, each lane its own element, and the output and the
    // inputs of its shape still by vectors (H200, GPT-2's cross-entropy backward over
    // 1024 x 50257 bfloat16: 198 us lane by lane). Only for long rows: over short ones (a
    // feature map of 2 x 2) most lanes would read another row's values, each its own
    // division, in a quarter of the threads.
    auto tiles = [&](int n) {
      return (inner > 0 && inner % n == 0) ||
             (inner >= kMinRowOfGatheredVectors && total > 0 && total % n == 0);
    };
    if (kind == StageKind::kElementwise && lanes >= 2 && tiles(lanes)) {
      // Where the accesses are contiguous and aligned, one vector load per input and one
      // vector store (the host tests the pointers' alignment before the launch and realigns
      // misaligned ones: backends/cuda/kernel_alignment.h). The tuner may take half as wide
      // accesses: on an H100, relu(x * a + b) * sigmoid(x) over 8192^2 floats ran about 1%
      // faster with 8-byte accesses (Triton's choice there).
      std::vector<int> widths = {target.vector_bytes()};
      const int narrow = target.vector_bytes() / 2;
      if (narrow / bytes >= 2 && tiles(narrow / bytes)) widths.push_back(narrow);
      const int width = ChooseKnob(&c.knob, "vector_bytes", widths, knob);
      const int width_lanes = width / bytes;
      auto parts = s.Split(*fused, width_lanes);
      if (!parts.ok()) return parts.status();
      absl::Status st = s.Vectorize(parts->second);
      if (!st.ok()) return st;
      st = BindBlocksAndThreads(s, parts->first, kBlockThreads);
      if (!st.ok()) return st;
      c.tactic = "elementwise.vector";
      c.why = absl::StrCat(total, " outputs of ", bytes, " bytes, ",
                           inner % width_lanes == 0 ? "innermost extent " : "extent ",
                           inner % width_lanes == 0 ? inner : total, " a multiple of ", width_lanes,
                           ": ", width_lanes, " lanes per thread (", width,
                           "-byte accesses), blocks of ", kBlockThreads);
      return c;
    }
    absl::Status st = BindBlocksAndThreads(s, *fused, kBlockThreads);
    if (!st.ok()) return st;
    return c;
  }
  auto two_stage_rows = TwoStageRows(sch, s, target, knob, warp_rows);
  if (!two_stage_rows.ok()) return two_stage_rows.status();
  if (*two_stage_rows) return **two_stage_rows;
  const int64_t rows = StaticExtent(s, l.spatial);
  if (!l.spatial.empty()) {
    auto fused = FuseAll(s, l.spatial);
    if (!fused.ok()) return fused.status();
    absl::Status st = s.Bind(*fused, "blockIdx.x");
    if (!st.ok()) return st;
  }
  c.tactic = "row_reduction.block_per_row";
  if (l.reduce.empty()) {
    c.why = "no reduce axis left";
    return c;
  }
  auto r = FuseAll(s, l.reduce);
  if (!r.ok()) return r.status();
  // Fewer threads for short reductions (a multiple of the warp size covering the extent) and
  // for symbolic ones (RowThreads).
  const int64_t extent = StaticExtent(s, {*r});
  const int own = extent < 0 && warp_rows ? target.warp_size() : RowThreads(extent, target);
  // The tuner may take more threads per row for long rows (more loads in flight), or fewer.
  std::vector<int> options{own};
  for (int t : {128, 512, 1024}) {
    if (extent >= 4 * t && t <= target.max_threads_per_block()) options.push_back(t);
  }
  const int threads = ChooseKnob(&c.knob, "row_threads", options, knob);
  // 16-byte vectors where the row allows (on an H200 the sum of each row of 8192^2 floats took
  // 2% less time with 4-float vectors than with scalar loads, 256 threads each).
  const int lanes =
      StaticRowVectorLanes({&s}, VectorLanesOfReads({&s}, {}, 0, target), extent, threads);
  ir::Var serial;
  absl::Status st = BindVectorsToThreads(s, {*r}, threads, lanes, &serial);
  // A thread's few vectors unrolled: their loads all in flight before the first add.
  const int64_t per_thread = lanes > 0 ? extent / (int64_t{lanes} * threads) : 0;
  if (st.ok() && per_thread > 1 && per_thread <= kUnrollVectors) st = s.Unroll(serial);
  if (!st.ok()) return st;
  c.why = absl::StrCat(
      CountText(rows), " rows of ", CountText(extent), " elements, ", threads,
      " threads per row (a kernel of its own)",
      lanes > 0 ? absl::StrCat(", ", lanes, "-element vectors per thread, ", per_thread, " each")
                : "");
  return c;
}

}  // namespace

absl::StatusOr<TacticChoice> ScheduleStage(ir::Schedule& sch, ir::Stage& stage, StageKind kind,
                                           const ir::Target& target, int knob, bool warp_rows) {
  if (kind == StageKind::kMatmul && target.has_shared_memory() && CanTileMatmul(sch, stage)) {
    absl::Status s = TileMatmul(sch, stage.tensor());
    if (!s.ok()) return s;
    return TacticChoice{stage.tensor()->name, "matmul.shared_memory_tiles",
                        "float32, static extents multiples of 64x64x8: 64x64 block tiles, 4x4 "
                        "accumulators per thread, k slices of 8 in shared memory"};
  }
  return target.is_gpu() ? ScheduleGpu(sch, stage, kind, target, knob, warp_rows)
                         : ScheduleCpu(stage, kind, target, knob);
}

}  // namespace cinn_like::hlir
