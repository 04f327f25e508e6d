/// \file The group scheduler: inlining, group tactics, then stage tactics.
#include "hlir/group_schedule/group_scheduler.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "hlir/group_schedule/cpu_row_tactic.h"
#include "hlir/group_schedule/persistent_row_tactic.h"
#include "hlir/group_schedule/reduction_tactics.h"
#include "hlir/group_schedule/schedule_util.h"
#include "hlir/group_schedule/stage_tactics.h"
#include "hlir/inline_size.h"
#include "ir/buffer_reads.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

namespace cinn_like::hlir {
namespace {

/// Rows of at most this many elements are reduced by one warp each on GPUs (at most 32 per
/// lane); longer ones by a block.
constexpr int64_t kWarpRowMaxElements = 1024;

/// A reduction of few long rows (FewLongRows) reducing this many elements or more in all is
/// materialized and split across blocks, not computed in its consumer's rows.
constexpr int64_t kSplitInRowsMin = int64_t{1} << 20;

bool IsOneElement(const ir::TensorNode& t) {
  for (const ir::Expr& d : t.shape) {
    const int64_t* c = ir::AsConstInt(d);
    if (!c || *c != 1) return false;
  }
  return true;
}

/// The number of leading dimensions of `consumer` that `reduction` keeps (its other
/// dimensions are size-1 kept dims), or -1 when its shape is not such a prefix.
int KeptRows(const ir::TensorNode& reduction, const ir::TensorNode& consumer) {
  const auto& rs = reduction.shape;
  const auto& cs = consumer.shape;
  if (rs.empty()) return cs.empty() ? -1 : 0;  // a scalar: the whole consumer is one row
  int rows = static_cast<int>(rs.size());
  if (rs.size() == cs.size()) {
    while (rows > 0) {
      const int64_t* c = ir::AsConstInt(rs[rows - 1]);
      if (!c || *c != 1) break;
      --rows;
    }
    if (rows == 0) rows = static_cast<int>(rs.size());  // all size 1: every dim a row
  }
  if (rows == 0 || rows > static_cast<int>(cs.size())) return -1;
  for (int d = 0; d < rows; ++d) {
    if (!ir::StructuralEqual(rs[d], cs[d])) return -1;
  }
  return rows;
}

/// Whether tensors `a` and `b` have the same elements' count: their shapes equal once the dims
/// of extent 1 are dropped.
bool SameElements(const ir::TensorNode& a, const ir::TensorNode& b) {
  auto dims = [](const ir::TensorNode& t) {
    std::vector<ir::Expr> d;
    for (const ir::Expr& e : t.shape) {
      if (!ir::IsConstInt(e, 1)) d.push_back(e);
    }
    return d;
  };
  return ir::StructuralEqual(dims(a), dims(b));
}

/// Whether tensors `a` and `b` have static shapes of as many elements.
bool SameElementCount(const ir::TensorNode& a, const ir::TensorNode& b) {
  auto count = [](const ir::TensorNode& t) -> int64_t {
    int64_t n = 1;
    for (const ir::Expr& e : t.shape) {
      const int64_t* d = ir::AsConstInt(e);
      if (!d) return -1;
      n *= *d;
    }
    return n;
  };
  return count(a) >= 0 && count(a) == count(b);
}

class GroupScheduler {
 public:
  GroupScheduler(ir::Schedule& sch, const GroupScheduleInput& input, const ir::Target& target)
      : sch_(sch), in_(input), target_(target) {}

  absl::StatusOr<std::vector<TacticChoice>> Run() {
    absl::Status s = Inline();
    if (!s.ok()) return s;
    // Each group's row consumer, found once (a group's internal reductions are read by no other
    // group, so the reductions of groups materialized below do not change another's answer).
    std::map<int, ReductionGroup> row_groups;
    for (auto& [group, reductions] : internal_reductions_) {
      ReductionGroup g{nullptr, reductions, -1};
      // A few long rows of megabytes in all (a BatchNorm's sums over [N, H, W] of 64 channels)
      // are split across blocks when their reductions are materialized; computed in their
      // consumer's rows they would take a block each (64 blocks on 132 SMs). Smaller ones (a
      // batch-1 softmax over a 50257-word vocabulary) stay in one kernel with their consumer:
      // the split's second kernel would cost more than the one block loses.
      if (std::any_of(reductions.begin(), reductions.end(),
                      [&](ir::Stage* r) { return FewLongRows(*r, target_, kSplitInRowsMin); })) {
        continue;
      }
      if (!FindRowConsumer(group, g)) continue;
      if (target_.is_gpu()) FindElementOutputs(group, g);
      row_groups.emplace(group, g);
    }
    if (target_.is_gpu()) MarkReadOnce(row_groups);
    std::set<ir::Stage*> done;
    for (auto& [group, reductions] : internal_reductions_) {
      auto found = row_groups.find(group);
      if (found == row_groups.end()) {
        // Materialized: a kernel of its own writing a device temporary.
        roots_.insert(roots_.end(), reductions.begin(), reductions.end());
        continue;
      }
      const ReductionGroup& g = found->second;
      auto c = ScheduleReductionGroup(g, KnobValue(group));
      if (!c.ok()) {
        return absl::Status(c.status().code(),
                            absl::StrCat("group scheduler: reductions fused into ",
                                         g.consumer->tensor().name(), ": ", c.status().message()));
      }
      c->group = group;
      choices_.push_back(*c);
      done.insert(g.consumer);
      done.insert(g.row_outputs.begin(), g.row_outputs.end());
      done.insert(g.element_outputs.begin(), g.element_outputs.end());
    }
    const std::vector<std::pair<ir::Stage*, ir::Stage*>> stored_in = StoredInReader(done);
    std::set<ir::Stage*> stored_values;
    for (const auto& [value, reader] : stored_in) stored_values.insert(value);
    for (ir::Stage* stage : roots_) {
      if (done.count(stage) || stored_values.count(stage)) continue;
      const ir::TensorNode* t = stage->tensor().node().get();
      StageKind kind = StageKind::kElementwise;
      if (t->reduce != ir::ReduceKind::kNone) {
        kind =
            Info(t).pattern == OpPattern::kOutFusible ? StageKind::kMatmul : StageKind::kReduction;
      }
      const int group = Info(t).group;
      // A row reduction alone over rows of symbolic length: in a bucket's lowering a warp per
      // row, which the entry runs for rows of at most the bound.
      ir::Expr length;
      if (kind == StageKind::kReduction && target_.is_gpu() && stage->rank() > 0 &&
          !IsColumnReduction(*stage)) {
        length = SymbolicReduceLength(*stage);
      }
      auto c = ScheduleStage(sch_, *stage, kind, target_, KnobValue(group),
                             length.defined() && in_.symbolic_row_bound > 0);
      if (c.ok() && length.defined() && in_.padded_rows) in_.padded_rows->push_back(length);
      if (!c.ok()) {
        return absl::Status(c.status().code(), absl::StrCat("group scheduler: stage ", t->name,
                                                            ": ", c.status().message()));
      }
      c->group = group;
      choices_.push_back(*c);
      for (const auto& [value, reader] : stored_in) {
        if (reader != stage || StoreInReader(*value, *stage)) continue;
        // Not computable there (its region, say): a kernel of its own, as without the tactic.
        auto own = ScheduleStage(sch_, *value, StageKind::kElementwise, target_, KnobValue(group));
        if (!own.ok()) {
          return absl::Status(own.status().code(),
                              absl::StrCat("group scheduler: stage ", value->tensor().name(), ": ",
                                           own.status().message()));
        }
        own->group = group;
        choices_.push_back(*own);
      }
    }
    return choices_;
  }

 private:
  /// The tuner's value for the knobs of `group`'s tactics; 0 (each tactic's own) when none.
  int KnobValue(int group) const {
    auto it = in_.knob_values.find(group);
    return it == in_.knob_values.end() ? 0 : it->second;
  }

  StageInfo Info(const ir::TensorNode* t) const {
    auto it = in_.info.find(t);
    return it == in_.info.end() ? StageInfo{} : it->second;
  }

  /// Stages of values that cross groups or leave the function are roots; within a group
  /// (GPUs) elementwise/broadcast/injective stages are inlined and reductions are kept for
  /// their group's tactic.
  absl::Status Inline() {
    // A library call (extern) reads whole stored buffers: its inputs are never inlined.
    std::set<const ir::TensorNode*> extern_inputs;
    for (const auto& stage : sch_.stages()) {
      if (!stage->tensor()->extern_body) continue;
      for (const auto& in : stage->tensor()->inputs) extern_inputs.insert(in.get());
    }
    // CPUs recompute an inlined value in each reader: one read by several is stored once,
    // unless its readers are all reductions or stored stages of its own fusion group, which
    // a row group computes per row while the row is in cache (add + layer_norm: the sum is
    // recomputed by each pass over the row). An elementwise reader would carry the value on
    // into further readers (a chain recomputed again at each step). A value its op marks
    // `recompute` is inlined as a single reader's would be (softmax's exp(x - max)).
    std::map<const ir::TensorNode*, int> readers;
    std::map<const ir::TensorNode*, bool> row_readers;
    for (const auto& stage : sch_.stages()) {
      const ir::TensorNode* r = stage->tensor().node().get();
      const int group = Info(r).group;
      const bool row_stage = r->reduce != ir::ReduceKind::kNone || in_.keep.count(r);
      for (const auto& in : stage->tensor()->inputs) {
        ++readers[in.get()];
        auto [it, fresh] = row_readers.emplace(in.get(), true);
        it->second = it->second && row_stage && group >= 0 && group == Info(in.get()).group;
      }
    }
    InlineSizes sizes;  // stages are producers first
    for (const auto& stage : sch_.stages()) {
      const ir::TensorNode* t = stage->tensor().node().get();
      if (t->extern_body) continue;  // a library call: nothing to schedule or inline
      const bool reduce = t->reduce != ir::ReduceKind::kNone;
      const bool constant = Info(t).compile_time_value || (IsOneElement(*t) && !reduce);
      // A stage whose inlined element would pass the budget is a kernel of its own (below).
      const bool fits =
          constant || (sizes.Estimate(*stage) <= InlineSizes::kBudget &&
                       (target_.is_gpu() || readers[t] <= 1 || row_readers[t] || t->recompute));
      if ((in_.keep.count(t) && !(constant && !in_.outputs.count(t))) || extern_inputs.count(t)) {
        roots_.push_back(stage.get());
      } else if (constant || (!reduce && fits)) {
        // Computed where it is read: one pass over memory per group, on every target.
        absl::Status s = stage->ComputeInline();
        if (!s.ok()) return s;
        sizes.Inline(*stage);
      } else if (!reduce) {
        roots_.push_back(stage.get());  // past the budget: a temporary (GPUs: its own kernel)
      } else if (Info(t).group >= 0 && (target_.is_gpu() || IsCpuRowReduction(*stage))) {
        internal_reductions_[Info(t).group].push_back(stage.get());
      } else {
        // CPUs: a temporary; GPUs without groups: a kernel writing a device temporary.
        roots_.push_back(stage.get());
      }
    }
    return absl::OkStatus();
  }

  /// Sets ir::BufferNode::read_once (`row_groups`: the groups whose reductions are computed in
  /// their row consumer) on each buffer that one reduction stage left after inlining
  /// reads, each element once (ReadsEachElementOnce), and no other stage or library call reads:
  /// kernels that do not write it then load it evict-first (Inductor's evict_first in its
  /// reductions). Not for what a row group reads in several of its stages (softmax's input, read
  /// by its max, its sum and its output: the later reads may hit the cache), for a group's
  /// reductions that its consumer recomputes for each of more elements (y * sum(x, keepdim)),
  /// nor for matmul/conv operands (their tiles are read by many blocks). Otherwise the tactics
  /// compute a group's reductions once per consumer row or element. Measured on an H200 with
  /// CUDA events over launches back to back: the sum of each row of 8192^2 floats 0.0633 ->
  /// 0.0619 ms (256 threads, 4-float vectors); the elementwise relu(x * a + b) * sigmoid(x)
  /// unchanged with every load evict-first (0.1876 -> 0.1875 ms) and 5% slower with x and a
  /// evict-first beside b's plain load: elementwise kernels are left alone.
  void MarkReadOnce(const std::map<int, ReductionGroup>& row_groups) {
    std::set<const ir::Stage*> recomputed;
    for (const auto& [group, g] : row_groups) {
      for (ir::Stage* r : g.reductions) {
        if (!SameElements(*g.consumer->tensor().node(), *r->tensor().node())) recomputed.insert(r);
      }
    }
    std::map<const ir::BufferNode*, int> readers;
    std::map<const ir::BufferNode*, ir::Buffer> once, all;
    for (const auto& stage : sch_.stages()) {
      if (stage->inlined()) continue;
      const ir::TensorNode* t = stage->tensor().node().get();
      if (t->extern_body) {
        for (const auto& in : t->inputs) ++readers[in->buffer.get()];
        continue;
      }
      const bool reduction = t->reduce != ir::ReduceKind::kNone &&
                             Info(t).pattern != OpPattern::kOutFusible &&
                             !recomputed.count(stage.get());
      const ir::Expr body = stage->InlinedBody();  // built once for all its buffers
      for (const auto& [node, buffer] : ir::LoadedBuffers(body)) {
        ++readers[node];
        all.emplace(node, buffer);
        if (reduction && ReadsEachElementOnce(*stage, body, node)) once.emplace(node, buffer);
      }
    }
    for (auto& [node, buffer] : all) buffer->read_once = readers[node] == 1 && once.count(node);
  }

  /// The one materialized non-reduction stage of `group` whose computation reads the group's
  /// internal reductions and whose leading dims they all keep (the same number of rows); false
  /// when there is none or more than one reader, or the shapes do not fit. Where that fails on
  /// a GPU, RowConsumerWithOutputs may still find one.
  bool FindRowConsumer(int group, ReductionGroup& g) {
    ReductionGroup single = g;
    const bool found = SingleRowConsumer(group, single);
    // A single consumer of one element per row (an RMSNorm's rsqrt the backward saves) that a
    // stage of the group reads whole rows with: that stage is the consumer and the rsqrt its
    // row output, one kernel, where the rsqrt's kernel and the normalization's were two.
    if (found && target_.is_gpu() &&
        SameElements(*single.consumer->tensor().node(), *g.reductions[0]->tensor().node())) {
      ReductionGroup with = g;
      if (RowConsumerWithOutputs(group, with)) {
        g = with;
        return true;
      }
    }
    if (found) {
      g = single;
      return true;
    }
    return target_.is_gpu() && RowConsumerWithOutputs(group, g);
  }

  bool SingleRowConsumer(int group, ReductionGroup& g) {
    for (ir::Stage* s : roots_) {
      const bool reads = std::any_of(g.reductions.begin(), g.reductions.end(), [&](ir::Stage* r) {
        return s->InlinedBodyReads(r->tensor()->buffer.get());
      });
      if (!reads) continue;
      const ir::TensorNode* t = s->tensor().node().get();
      if (g.consumer || Info(t).group != group || t->reduce != ir::ReduceKind::kNone) {
        return false;
      }
      g.consumer = s;
    }
    if (!g.consumer) return false;
    g.row_dims = -1;
    for (ir::Stage* r : g.reductions) {
      // Read only by another reduction:
      if (!g.consumer->InlinedBodyReads(r->tensor()->buffer.get())) return false;
      int rows = KeptRows(*r->tensor().node(), *g.consumer->tensor().node());
      if (rows < 0 || (g.row_dims >= 0 && rows != g.row_dims)) return false;
      g.row_dims = rows;
    }
    return true;
  }

  /// A row consumer whose group also stores values of one element per row that it reads (a
  /// LayerNorm's mean and rstd, outputs its backward reads): those stored stages that read the
  /// reductions are the row outputs, stored from inside the consumer's rows, and the consumer
  /// is the group's one other stored stage that reads them. False unless the reductions are
  /// row reductions, every stored stage reading a reduction or a row output is the consumer or
  /// a row output, and each row output keeps the consumer's rows and is read by it.
  bool RowConsumerWithOutputs(int group, ReductionGroup& g) {
    auto reads_any = [](const ir::Stage* s, const std::vector<ir::Stage*>& stages) {
      return std::any_of(stages.begin(), stages.end(), [&](const ir::Stage* t) {
        return s->InlinedBodyReads(t->tensor()->buffer.get());
      });
    };
    for (ir::Stage* s : roots_) {
      if (!reads_any(s, g.reductions)) continue;
      const ir::TensorNode* t = s->tensor().node().get();
      if (Info(t).group != group || t->reduce != ir::ReduceKind::kNone ||
          !SameElements(*t, *g.reductions[0]->tensor().node())) {
        return false;
      }
      g.row_outputs.push_back(s);
    }
    if (g.row_outputs.empty() || !PerThreadReason(*g.reductions[0]).empty()) return false;
    for (ir::Stage* s : roots_) {
      if (std::count(g.row_outputs.begin(), g.row_outputs.end(), s) ||
          !reads_any(s, g.row_outputs)) {
        continue;
      }
      if (g.consumer || Info(s->tensor().node().get()).group != group ||
          s->tensor()->reduce != ir::ReduceKind::kNone) {
        return false;
      }
      g.consumer = s;
    }
    if (!g.consumer) return false;
    g.row_dims = -1;
    for (ir::Stage* r : g.reductions) {
      int rows = KeptRows(*r->tensor().node(), *g.consumer->tensor().node());
      if (rows < 0 || (g.row_dims >= 0 && rows != g.row_dims)) return false;
      g.row_dims = rows;
    }
    for (ir::Stage* o : g.row_outputs) {
      if (KeptRows(*o->tensor().node(), *g.consumer->tensor().node()) != g.row_dims ||
          !g.consumer->InlinedBodyReads(o->tensor()->buffer.get())) {
        return false;
      }
    }
    return true;
  }

  /// The element outputs of row group `g` (ReductionGroup::element_outputs): stored stages of
  /// its fusion group, of the consumer's static shape, that read none of the group's stored
  /// stages and that its reductions or consumer read, each only at the element the row's thread
  /// that stores it holds (a reduction along its rows, the consumer at its own index): a read
  /// of another element (a rotation of the row, a transpose) would load what another thread
  /// stores, with no barrier between. Every other stage that reads one runs after the
  /// consumer (ComputeAtOwnBuffer refuses the others). None where the reductions are computed
  /// per thread (ThreadPerElement).
  void FindElementOutputs(int group, ReductionGroup& g) {
    if (!PerThreadReason(*g.reductions[0]).empty() || g.row_dims < 1) return;
    const ir::TensorNode& consumer = *g.consumer->tensor().node();
    for (const ir::Expr& d : consumer.shape) {
      if (!ir::AsConstInt(d)) return;
    }
    std::vector<ir::Stage*> stored = g.reductions;
    stored.insert(stored.end(), g.row_outputs.begin(), g.row_outputs.end());
    stored.push_back(g.consumer);
    const ir::NestOrder order(sch_.stages());
    for (ir::Stage* s : roots_) {
      const ir::TensorNode* t = s->tensor().node().get();
      const ir::BufferNode* buffer = t->buffer.get();
      if (Info(t).group != group || t->reduce != ir::ReduceKind::kNone || t->extern_body ||
          std::count(stored.begin(), stored.end(), s) ||
          !ir::StructuralEqual(t->shape, consumer.shape) ||
          std::any_of(stored.begin(), stored.end(), [&](const ir::Stage* r) {
            return s->InlinedBodyReads(r->tensor()->buffer.get());
          })) {
        continue;
      }
      bool read = false, own_elements = true;
      for (const ir::Stage* r : stored) {
        if (!r->InlinedBodyReads(buffer)) continue;
        read = true;
        if (r->tensor()->reduce != ir::ReduceKind::kNone) {
          own_elements = own_elements && r->ReadsAlongOwnRows(buffer, g.row_dims);
        } else {
          own_elements = own_elements && r == g.consumer && !r->ReadNotAtOwnIndex(buffer);
        }
      }
      bool later = true;
      for (const auto& st : sch_.stages()) {
        if (st.get() == s || st->inlined() || st->folded() ||
            std::count(stored.begin(), stored.end(), st.get()) || !st->InlinedBodyReads(buffer)) {
          continue;
        }
        later = later && order.RunsAfter(*st, *g.consumer);
      }
      if (read && own_elements && later) g.element_outputs.push_back(s);
    }
  }

  /// The tactic of a group whose reductions are computed inside their consumer.
  absl::StatusOr<TacticChoice> ScheduleReductionGroup(const ReductionGroup& g, int knob) {
    if (!target_.is_gpu()) return CpuRowGroup(sch_, g, target_);
    std::string per_thread = PerThreadReason(*g.reductions[0]);
    if (!per_thread.empty()) return ThreadPerElement(sch_, g, target_, std::move(per_thread));
    // Row and element outputs: a warp or a block per row (the persistent row does not store
    // them).
    auto plan = g.row_outputs.empty() && g.element_outputs.empty()
                    ? PlanPersistentRow(sch_, g, target_, knob, in_.symbolic_row_bound)
                    : std::nullopt;
    if (plan) {
      if (plan->padded_length.defined() && in_.padded_rows) {
        in_.padded_rows->push_back(plan->padded_length);
      }
      return PersistentRow(sch_, g, *plan);
    }
    // Rows of symbolic length: in a bucket's lowering a warp per row (the entry runs it for
    // rows of at most the bound), else (rows past every bucket) a block per row; each thread
    // reads 16 bytes at a time.
    const ir::Expr symbolic_length = SymbolicReduceLength(*g.reductions[0]);
    const int lanes = symbolic_length.defined() ? SymbolicRowLanes(g) : 0;
    std::string warp_why;
    std::optional<TuningKnob> rows_knob;
    const int rows_per_block = WarpRowsPerBlock(g, knob, &rows_knob, &warp_why);
    if (symbolic_length.defined() && in_.padded_rows) in_.padded_rows->push_back(symbolic_length);
    if (rows_per_block > 0) {
      const int warp_lanes =
          symbolic_length.defined() ? lanes : StaticRowLanes(g, target_.warp_size());
      if (warp_lanes > 1) absl::StrAppend(&warp_why, ", ", warp_lanes, "-element vectors per lane");
      auto c = WarpPerRow(sch_, g, target_, rows_per_block, warp_lanes, warp_why);
      if (c.ok()) c->knob = rows_knob;
      return c;
    }
    const int64_t extent = ReduceExtent(*g.reductions[0]);
    return BlockPerRow(
        sch_, g, target_,
        symbolic_length.defined() ? lanes : StaticRowLanes(g, RowThreads(extent, target_)));
  }

  /// The elements of a static row each of `threads` threads (a block's in BlockPerRow, a warp's
  /// lanes in WarpPerRow) reads at a time: SymbolicRowLanes's vector where the reductions read
  /// along their one reduce axis (ReadsAlongReduceAxis) and the row is a multiple of one vector
  /// per thread (no thread has a partial vector), else 0 (scalar loads). A float16 row sum
  /// (accumulated in float32, cast back by the group's consumer) is read as the float32 one is
  /// (stage_tactics.cc).
  int StaticRowLanes(const ReductionGroup& g, int threads) const {
    return StaticRowVectorLanes({g.reductions.begin(), g.reductions.end()}, SymbolicRowLanes(g),
                                ReduceExtent(*g.reductions[0]), threads);
  }

  /// A CPU reduction that CpuRowGroup can compute inside its consumer's rows: a row reduction
  /// (its contiguous axis reduced), not a matmul/conv accumulator.
  bool IsCpuRowReduction(const ir::Stage& r) const {
    return Info(r.tensor().node().get()).pattern != OpPattern::kOutFusible && r.rank() > 0 &&
           !IsColumnReduction(r);
  }

  /// Why the group's reductions are computed by each thread for its own element rather than
  /// by a block per row; empty when they are not.
  std::string PerThreadReason(const ir::Stage& r) const {
    if (Info(r.tensor().node().get()).pattern == OpPattern::kOutFusible) {
      return "a matmul/conv accumulator: each thread its output";
    }
    if (r.rank() > 0 && IsColumnReduction(r)) {
      return "a column reduction: threads over the contiguous axis, coalesced";
    }
    const int64_t extent = ReduceExtent(r);
    if (extent < 0 || extent > kPerThreadMaxReduce) return "";
    return absl::StrCat(extent, " elements per output (<= ", kPerThreadMaxReduce,
                        "): each thread reduces its own");
  }

  /// Rows per block when the consumer of `g` has one row dim and each row is one warp's: short
  /// enough (at most kWarpRowMaxElements, static) or of symbolic length in a bucket's lowering
  /// (or while cinn_like_symbolic_row_threads asks for a warp). The static row count must be a
  /// multiple of the rows per block (8 warps, else 4 or 2); a symbolic one takes 8 and guards the
  /// last block's rows past the end. A guard never splits a warp (its lanes share the row), so the
  /// shuffles stay whole and no block barrier is needed. 0 otherwise. The tuner may ask for
  /// fewer rows per block (`knob`, set in `*rows_knob`); `why` gets the reason.
  int WarpRowsPerBlock(const ReductionGroup& g, int knob, std::optional<TuningKnob>* rows_knob,
                       std::string* why) const {
    const int64_t extent = ReduceExtent(*g.reductions[0]);
    // A row of symbolic length: a warp in a bucket's lowering (rows of at most its bound), or
    // where cinn_like_symbolic_row_threads asks for one.
    const bool symbolic_row =
        extent < 0 && SymbolicReduceLength(*g.reductions[0]).defined() &&
        (in_.symbolic_row_bound > 0 || RowThreads(extent, target_) == target_.warp_size());
    if (g.row_dims < 1 || extent == 0 || extent > kWarpRowMaxElements) return 0;
    if (extent < 0 && !symbolic_row) return 0;
    // Blocks take rows of the innermost row dim (WarpPerRow): with several row dims, a block
    // whose rows crossed an outer dim would index the reductions by a division (not affine).
    const std::vector<ir::Var> leaves = LeafVars(*g.consumer);
    const int64_t rows = StaticExtent(*g.consumer, {leaves[g.row_dims - 1]});
    const int64_t total = StaticExtent(
        *g.consumer, std::vector<ir::Var>(leaves.begin(), leaves.begin() + g.row_dims));
    std::vector<int> fits;  // the most first: the tactic's own choice
    for (int per_block = kBlockThreads / target_.warp_size(); per_block >= 2; per_block /= 2) {
      if (rows < 0 || (rows > 0 && rows % per_block == 0)) fits.push_back(per_block);
    }
    if (fits.empty()) return 0;
    const int per_block = ChooseKnob(rows_knob, "rows_per_block", fits, knob);
    *why = absl::StrCat(CountText(total), " rows of ",
                        symbolic_row
                            ? std::string("symbolic length")
                            : absl::StrCat(extent, " elements (<= ", kWarpRowMaxElements, ")"),
                        ": a warp per row, ", per_block, " rows per block",
                        rows < 0 ? " (the last block's rows past the end guarded)" : "", ", ",
                        g.reductions.size(), " reduction(s) by shuffles");
    return per_block;
  }

  /// The elements of a row of symbolic length a warp lane reads at a time (WarpPerRow): the
  /// device's widest access of the widest element the group reads or writes (8 halves, 4
  /// floats).
  int SymbolicRowLanes(const ReductionGroup& g) const {
    std::vector<const ir::Stage*> stages(g.reductions.begin(), g.reductions.end());
    stages.push_back(g.consumer);
    // The reductions' values: one per row, not read along it.
    std::set<const ir::BufferNode*> results;
    for (const ir::Stage* r : g.reductions) results.insert(r->tensor()->buffer.get());
    return VectorLanesOfReads(stages, results, g.consumer->tensor()->dtype.bytes(), target_);
  }

  /// Stored elementwise values of a group (GPUs) that one other stored elementwise stage of
  /// the group reads, each element at its own row-major offset, and no other stage reads (a
  /// dropout's mask, returned for the backward, read by the dropout; a matmul's product
  /// returned as a reshape of it, read by its activation), each with that reader: the reader's
  /// kernel stores the value too (StoreInReader), where it was a kernel of its own whose reader
  /// loaded it back (a launch, and a round trip through memory, more). `done`: the stages the
  /// reduction groups' tactics took.
  std::vector<std::pair<ir::Stage*, ir::Stage*>> StoredInReader(
      const std::set<ir::Stage*>& done) const {
    std::vector<std::pair<ir::Stage*, ir::Stage*>> found;  // in roots_'s order
    if (!target_.is_gpu()) return found;
    auto elementwise = [&](const ir::Stage* s) {
      const ir::TensorNode* t = s->tensor().node().get();
      return !done.count(const_cast<ir::Stage*>(s)) && !t->extern_body &&
             t->reduce == ir::ReduceKind::kNone && Info(t).group >= 0 && s->rank() > 0 &&
             t->buffer->scope == ir::MemoryScope::kGlobal;
    };
    for (ir::Stage* value : roots_) {
      if (!elementwise(value)) continue;
      const ir::BufferNode* buffer = value->tensor()->buffer.get();
      std::vector<ir::Stage*> readers;
      for (const auto& s : sch_.stages()) {
        if (s.get() == value || s->inlined() || s->folded()) continue;
        // A library call reads its inputs' buffers whole, with no body to look into.
        bool reads = s->tensor()->extern_body
                         ? std::any_of(s->tensor()->inputs.begin(), s->tensor()->inputs.end(),
                                       [&](const std::shared_ptr<ir::TensorNode>& in) {
                                         return in->buffer.get() == buffer;
                                       })
                         : s->InlinedBodyReads(buffer);
        if (reads) readers.push_back(s.get());
      }
      if (readers.size() != 1) continue;
      ir::Stage* reader = readers[0];
      const bool root = std::find(roots_.begin(), roots_.end(), reader) != roots_.end();
      // Read at its own index; through a reshape (another shape of as many elements) at its
      // own row-major offset.
      const bool reshaped = !ir::StructuralEqual(reader->tensor()->shape, value->tensor()->shape);
      if (!root || !elementwise(reader) ||
          Info(reader->tensor().node().get()).group != Info(value->tensor().node().get()).group ||
          !SameElementCount(*reader->tensor().node(), *value->tensor().node()) ||
          reader->ReadNotAtOwnIndex(buffer, reshaped)) {
        continue;
      }
      found.emplace_back(value, reader);
    }
    // A value whose reader is itself stored in its own reader: the chain stays as it was.
    std::set<ir::Stage*> values;
    for (const auto& [value, reader] : found) values.insert(value);
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const auto& vr) { return values.count(vr.second) > 0; }),
                found.end());
    return found;
  }

  /// `value` computed inside `reader`'s kernel (scheduled already): at its innermost loop
  /// bound to threadIdx.x, each thread computing and storing the elements it reads. False
  /// (nothing changed) where the reader has no such loop or compute_at refuses the region.
  bool StoreInReader(ir::Stage& value, ir::Stage& reader) {
    const ir::Var* thread = nullptr;
    for (int leaf : reader.leaves()) {
      const ir::Stage::Axis& a = reader.axes()[leaf];
      if (a.kind == ir::ForKind::kGpuThread && a.bind_axis == 0) thread = &a.var;
    }
    if (!thread || !value.ComputeAtOwnBuffer(reader, *thread).ok()) return false;
    choices_.push_back(TacticChoice{
        value.tensor().name(), "elementwise.stored_in_reader",
        absl::StrCat("read only by ", reader.tensor().name(),
                     ", element for element: stored by its threads (no kernel of its own)")});
    choices_.back().group = Info(value.tensor().node().get()).group;
    return true;
  }

  ir::Schedule& sch_;
  const GroupScheduleInput& in_;
  const ir::Target target_;
  std::vector<ir::Stage*> roots_;
  std::map<int, std::vector<ir::Stage*>> internal_reductions_;  // by group, schedule order
  std::vector<TacticChoice> choices_;
};

}  // namespace

absl::StatusOr<std::vector<TacticChoice>> ScheduleGroups(ir::Schedule& sch,
                                                         const GroupScheduleInput& input,
                                                         const ir::Target& target) {
  return GroupScheduler(sch, input, target).Run();
}

}  // namespace cinn_like::hlir
