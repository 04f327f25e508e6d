/// \file Rows held in registers: one read of each re-read input per row.
#include "hlir/group_schedule/persistent_row_tactic.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlir/group_schedule/schedule_util.h"
#include "ir/buffer_reads.h"
#include "ir/printer.h"
#include "ir/schedule_region.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace cinn_like::hlir {
namespace {

/// Bytes of one cached input a thread aims to hold (two 16-byte vectors: enough loads in
/// flight per thread, few registers), and the most a thread of a block of up to 256 threads
/// may hold of all cached tensors.
constexpr int kPreferredBytesPerThread = 32;
constexpr int kMaxBytesPerThread = 128;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/// The offset of a row's reads of a buffer from the row's column (ReadAlongRow): every read
/// of a cached buffer must have the same, so that a thread's region is its share exactly.
using RowOffset = std::optional<int64_t>;

/// Whether every load of `buffer` in `e` reads it along the row at one offset: its last index
/// `col + c` (`col` the loop over the row, coefficient 1) with the same constant c as every
/// other read (`offset`, set by the first), its other indices free of `col`. A thread's region
/// of the buffer is then its share of the row shifted by c (ir::InferRegion; two offsets, or a
/// stride, would widen it past the share or fail).
bool ReadAlongRow(const ir::Expr& e, const ir::BufferNode* buffer, const ir::Var& col,
                  RowOffset* offset) {
  struct Finder : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    const ir::BufferNode* buffer;
    const ir::Variable* col;
    RowOffset* offset;
    bool along = true;
    void VisitLoad(const ir::Load* op) override {
      ir::IRVisitor::VisitLoad(op);
      if (op->buffer.get() != buffer) return;
      for (size_t d = 0; d + 1 < op->indices.size(); ++d) {
        along &= !ir::UsesVar(op->indices[d], col);
      }
      const ir::AffineForm last = ir::Linearize(op->indices.back());
      int uses = 0;
      for (const auto& term : last.terms) {
        if (term.coeff == 0 || !ir::UsesVar(term.expr, col)) continue;
        ++uses;
        along &= term.expr.As<ir::Variable>() == col && term.coeff == 1;
      }
      along &= uses == 1 && (!*offset || **offset == last.constant);
      *offset = last.constant;
    }
  } finder;
  finder.buffer = buffer;
  finder.col = col.As<ir::Variable>();
  finder.offset = offset;
  finder.Visit(e);
  return finder.along;
}

/// The stage computing each buffer of the schedule.
using StageOf = std::map<const ir::BufferNode*, const ir::Stage*>;

/// Adds to `out` the buffers `e` reads, directly or through stages inlined into it, except
/// through those whose buffers are in `kept` (the tactic computes them into registers: their
/// reads are theirs; the kept buffer itself is read). `visited`: the inlined stages walked
/// already (a stage inlined into several is walked once).
void AddReadsThrough(const ir::Expr& e, const StageOf& stage_of,
                     const std::set<const ir::BufferNode*>& kept,
                     std::set<const ir::Stage*>* visited, std::set<const ir::BufferNode*>* out) {
  for (const ir::BufferNode* b : ir::BuffersRead(e)) {
    out->insert(b);
    auto it = stage_of.find(b);
    if (it == stage_of.end() || !it->second->inlined() || kept.count(b)) continue;
    if (visited->insert(it->second).second) {
      AddReadsThrough(it->second->body(), stage_of, kept, visited, out);
    }
  }
}

/// The buffers `e` reads, directly or through inlined stages (AddReadsThrough).
std::set<const ir::BufferNode*> ReadsThrough(const ir::Expr& e, const StageOf& stage_of,
                                             const std::set<const ir::BufferNode*>& kept) {
  std::set<const ir::Stage*> visited;
  std::set<const ir::BufferNode*> out;
  AddReadsThrough(e, stage_of, kept, &visited, &out);
  return out;
}

/// What a row of `g` keeps in registers (PersistentRowPlan::intermediates and ::inputs).
void PlanRegisters(const ir::Schedule& sch, const ReductionGroup& g, PersistentRowPlan* plan) {
  std::set<const ir::Stage*> group(g.reductions.begin(), g.reductions.end());
  group.insert(g.consumer);
  const ir::Var col = LeafVars(*g.consumer).back();
  // Whether every read of `buffer` by the group is along the row at one offset.
  auto along_row = [&](const ir::BufferNode* buffer, bool inlined_bodies) {
    auto body = [&](const ir::Stage* s) { return inlined_bodies ? s->InlinedBody() : s->body(); };
    RowOffset offset;
    bool along = ReadAlongRow(body(g.consumer), buffer, col, &offset);
    for (const ir::Stage* r : g.reductions) {
      along = along && ReadAlongRow(body(r), buffer, SplitLeaves(*r).reduce[0], &offset);
    }
    return along;
  };
  StageOf stage_of;
  for (const auto& s : sch.stages()) stage_of[s->tensor()->buffer.get()] = s.get();
  const ReaderIndex readers_of = DirectReaders(sch);
  auto direct_readers = [&](const ir::BufferNode* buffer) -> const std::vector<const ir::Stage*>& {
    static const std::vector<const ir::Stage*> kNone;
    auto it = readers_of.find(buffer);
    return it == readers_of.end() ? kNone : it->second;
  };
  // Inlined elementwise stages read by two or more of the group's stages and by nothing else
  // (softmax's exp(x - max), a residual add before layer_norm): computed once per element.
  std::set<const ir::BufferNode*> kept;
  std::vector<const ir::Stage*> computed(group.begin(), group.end());
  for (const auto& p : sch.stages()) {
    if (!p->inlined() || p->tensor()->extern_body || p->reduce() != ir::ReduceKind::kNone) {
      continue;
    }
    const ir::BufferNode* buffer = p->tensor()->buffer.get();
    int readers = 0;
    bool others = false;
    for (const ir::Stage* s : direct_readers(buffer)) {
      if (s == p.get()) continue;
      if (group.count(s)) {
        ++readers;
      } else {
        others = true;
      }
    }
    if (readers < 2 || others || !along_row(buffer, false)) continue;
    plan->intermediates.push_back(p->tensor());
    kept.insert(buffer);
    computed.push_back(p.get());
  }
  // Inputs that two or more of those read (through other inlined stages too). A kernel
  // outside the group keeps reading the input from memory; an input that such a kernel reads
  // through an inlined stage (whose loads the registers would replace there too) is not kept.
  std::set<const ir::BufferNode*> read_outside;
  {
    std::set<const ir::Stage*> visited;
    for (const auto& s : sch.stages()) {
      if (s->inlined() || group.count(s.get()) || !s->body().defined()) continue;
      AddReadsThrough(s->body(), stage_of, {}, &visited, &read_outside);
    }
  }
  // How many of the computed stages read each buffer (through inlined stages).
  std::map<const ir::BufferNode*, int> computed_readers;
  for (const ir::Stage* s : computed) {
    for (const ir::BufferNode* b : ReadsThrough(s->body(), stage_of, kept)) ++computed_readers[b];
  }
  std::map<const ir::BufferNode*, ir::Tensor> candidates;
  for (const auto& s : sch.stages()) {
    for (const auto& in : s->tensor()->inputs) {
      if (in->dtype.bytes() > 0) candidates.emplace(in->buffer.get(), ir::Tensor(in));
    }
  }
  for (const auto& [buffer, tensor] : candidates) {
    if (stage_of.count(buffer) && stage_of.at(buffer)->inlined()) continue;
    auto counted = computed_readers.find(buffer);
    if (counted == computed_readers.end() || counted->second < 2 || !along_row(buffer, true)) {
      continue;
    }
    bool shared_producer = false, folded = false;
    for (const ir::Stage* s : direct_readers(buffer)) {
      const ir::BufferNode* b = s->tensor()->buffer.get();
      if (b == buffer) continue;
      folded |= s->folded();
      shared_producer |= s->inlined() && !kept.count(b) && read_outside.count(b);
    }
    if (folded || shared_producer) continue;
    plan->inputs.push_back(tensor);
  }
}

}  // namespace

std::optional<PersistentRowPlan> PlanPersistentRow(const ir::Schedule& sch, const ReductionGroup& g,
                                                   const ir::Target& target, int requested_bytes,
                                                   int64_t symbolic_bound) {
  if (!target.is_gpu() || g.row_dims < 1 || g.reductions.empty()) return std::nullopt;
  const int64_t static_extent = ReduceExtent(*g.reductions[0]);
  if (static_extent == 0 || (static_extent < 0 && symbolic_bound <= 0)) return std::nullopt;
  // One column dim, one reduce axis each: a thread's share is then an affine, contiguous range
  // of both (a fused pair of dims would index by a division, which no region can follow).
  // A row of symbolic length: the same length everywhere, planned at the bound.
  const ir::Expr row_length = SymbolicReduceLength(*g.reductions[0]);
  for (const ir::Stage* r : g.reductions) {
    if (ReduceExtent(*r) != static_extent || IsColumnReduction(*r) ||
        SplitLeaves(*r).reduce.size() != 1 || r->num_root_axes() != r->rank() + 1) {
      return std::nullopt;
    }
    const ir::Expr length = SymbolicReduceLength(*r);
    if (length.defined() != row_length.defined() ||
        (length.defined() && !ir::StructuralEqual(length, row_length))) {
      return std::nullopt;
    }
  }
  const std::vector<ir::Var> leaves = LeafVars(*g.consumer);
  if (static_cast<int>(leaves.size()) != g.row_dims + 1 ||
      StaticExtent(*g.consumer, {leaves.back()}) != static_extent) {
    return std::nullopt;
  }
  const int64_t extent = static_extent > 0 ? static_extent : symbolic_bound;
  if (static_extent < 0) {
    const ir::Expr* col = nullptr;
    for (const ir::Stage::Axis& a : g.consumer->axes()) {
      if (a.var.same_as(leaves.back())) col = &a.extent;
    }
    if (!col || !ir::StructuralEqual(*col, row_length)) return std::nullopt;
  }

  PersistentRowPlan plan;
  if (static_extent < 0) plan.padded_length = row_length;
  PlanRegisters(sch, g, &plan);
  if (plan.inputs.empty() && plan.intermediates.empty()) return std::nullopt;
  // A thread's share of the row: the preferred bytes of the widest input read from memory.
  int bytes = 1, register_bytes = 0;
  for (const ir::Tensor& t : plan.inputs) bytes = std::max(bytes, t->dtype.bytes());
  if (plan.inputs.empty()) bytes = plan.intermediates[0]->dtype.bytes();
  for (const auto* list : {&plan.inputs, &plan.intermediates}) {
    for (const ir::Tensor& t : *list) register_bytes += t->dtype.bytes();
  }
  // Threads per row: the row in chunks of `share` bytes of the widest input, within a warp
  // and a block; 0 when that does not divide the row or passes the register budget (blocks
  // of more than 256 threads get at most 64 registers per thread, __launch_bounds__: half).
  auto threads_for = [&](int share) -> int64_t {
    int64_t t = extent / std::max(1, share / bytes);
    t = std::clamp<int64_t>(t, target.warp_size(), target.max_threads_per_block());
    if (!IsPowerOfTwo(t) || extent % t != 0) return 0;
    const int budget = t > 256 ? kMaxBytesPerThread / 2 : kMaxBytesPerThread;
    return (extent / t) * register_bytes > budget ? 0 : t;
  };
  if (threads_for(kPreferredBytesPerThread) == 0) return std::nullopt;
  // The tuner's choices: shares whose thread counts differ, the preferred one first.
  std::vector<int> shares;
  std::set<int64_t> seen;
  for (int share : {kPreferredBytesPerThread, 16, 64, 8}) {
    const int64_t t = threads_for(share);
    if (t > 0 && seen.insert(t).second) shares.push_back(share);
  }
  const int64_t threads =
      threads_for(ChooseKnob(&plan.knob, "row_bytes_per_thread", shares, requested_bytes));
  const int64_t per_thread = extent / threads;
  plan.threads = static_cast<int>(threads);
  plan.per_thread = static_cast<int>(per_thread);
  plan.vector_bytes = target.vector_bytes();
  // Short rows: several per block on threadIdx.y, only where they divide the innermost row
  // dim (no row runs past the end, so no guard encloses a cross-thread reduction).
  // A symbolic row count takes the most and guards the last block's rows past the end (the
  // block reduce is reached by every thread: lower_thread_reduce keeps it outside the guards).
  const int64_t rows = StaticExtent(*g.consumer, {leaves[g.row_dims - 1]});
  for (int per_block = kBlockThreads / plan.threads; per_block >= 2; per_block /= 2) {
    if (rows < 0 || rows % per_block == 0) {
      plan.rows_per_block = per_block;
      break;
    }
  }
  auto names = [](const std::vector<ir::Tensor>& ts) {
    std::vector<std::string> out;
    for (const ir::Tensor& t : ts) out.push_back(t.name());
    return out.empty() ? std::string("none") : absl::StrJoin(out, ", ");
  };
  const int64_t total =
      StaticExtent(*g.consumer, std::vector<ir::Var>(leaves.begin(), leaves.begin() + g.row_dims));
  const std::string row_text =
      static_extent > 0 ? absl::StrCat(extent, " elements")
                        : absl::StrCat("symbolic length ", ir::ToString(row_length), " (at most ",
                                       extent, " in this bucket, padded and guarded)");
  plan.why = absl::StrCat(CountText(total), " rows of ", row_text, ", ", g.reductions.size() + 1,
                          " stages reading each row: in registers ", plan.threads, " threads x ",
                          plan.per_thread, " elements of inputs ", names(plan.inputs),
                          " (read once) and of ", names(plan.intermediates), " (computed once), ",
                          plan.rows_per_block, " row(s) per block");
  return plan;
}

absl::StatusOr<TacticChoice> PersistentRow(ir::Schedule& sch, const ReductionGroup& g,
                                           const PersistentRowPlan& plan) {
  ir::Stage& consumer = *g.consumer;
  const std::vector<ir::Var> axes = LeafVars(consumer);
  const std::vector<ir::Var> cols(axes.begin() + g.row_dims, axes.end());
  // Rows: blockIdx.x, and threadIdx.y for several rows per block (as WarpPerRow).
  ir::Var row;
  absl::Status st;
  if (plan.rows_per_block > 1) {
    auto parts = consumer.Split(axes[g.row_dims - 1], plan.rows_per_block);
    if (!parts.ok()) return parts.status();
    std::vector<ir::Var> blocks(axes.begin(), axes.begin() + g.row_dims - 1);
    blocks.push_back(parts->first);
    auto block = FuseAll(consumer, blocks);
    if (!block.ok()) return block.status();
    st = consumer.Bind(*block, "blockIdx.x");
    if (st.ok()) st = consumer.Bind(parts->second, "threadIdx.y");
    row = parts->second;
  } else {
    auto leaves = FuseRows(consumer, g.row_dims);
    if (!leaves.ok()) return leaves.status();
    st = consumer.Bind(leaves->row, "blockIdx.x");
    row = leaves->row;
  }
  if (!st.ok()) return st;
  // A thread's elements of a row: `per_thread` contiguous ones; returns their loop.
  auto split_row = [&](ir::Stage& s, const std::vector<ir::Var>& vars) -> absl::StatusOr<ir::Var> {
    auto fused = FuseAll(s, vars);
    if (!fused.ok()) return fused.status();
    auto parts = s.Split(*fused, plan.per_thread);
    if (!parts.ok()) return parts.status();
    if (plan.padded_length.defined()) {
      absl::Status at_most = s.AssumeExtentAtMost(parts->first, plan.threads);
      if (!at_most.ok()) return at_most;
    }
    absl::Status bound = s.Bind(parts->first, "threadIdx.x");
    if (!bound.ok()) return bound;
    return parts->second;
  };
  // Vectors of the stage's dtype (16 bytes where the thread's share splits so), unrolled.
  auto vectorize_row = [&](ir::Stage& s, const ir::Var& inner) -> absl::Status {
    const int bytes = s.tensor()->dtype.bytes();
    const int64_t extent = StaticExtent(s, {inner});
    const int lanes =
        bytes > 0 && extent > 0 ? LanesDividing(extent, plan.vector_bytes / bytes) : 0;
    if (lanes < 2) return s.Unroll(inner);
    auto vector = s.Vectorize(inner, lanes);
    if (!vector.ok()) return vector.status();
    return s.Unroll(LeafVars(s)[LeafVars(s).size() - 2]);
  };
  auto share = split_row(consumer, cols);
  if (!share.ok()) return share.status();
  st = vectorize_row(consumer, *share);
  if (!st.ok()) return st;
  // Each reduction into a local value at the row, over the same threads and elements.
  std::set<const ir::Stage*> group = {&consumer};
  for (auto it = g.reductions.rbegin(); it != g.reductions.rend(); ++it) {
    ir::Tensor t = (*it)->tensor();
    auto cache = sch.CacheWrite(t, "local");
    if (!cache.ok()) return cache.status();
    st = sch[t].ComputeInline();
    ir::Stage& c = sch[*cache];
    group.insert(&c);
    if (st.ok()) st = c.ComputeAt(consumer, row);
    if (!st.ok()) return st;
    auto terms = split_row(c, SplitLeaves(c).reduce);
    if (!terms.ok()) return terms.status();
    st = c.Unroll(*terms);
    if (!st.ok()) return st;
  }
  // Each thread's share of the row into its local arrays: the intermediates computed (their
  // readers first: a reader must be computed at the row before what it reads), then the
  // inputs read. The group's stages and the stages inlined into them read the arrays; other
  // kernels keep reading memory.
  auto keep_at_row = [&](const ir::Tensor& t) -> absl::Status {
    std::vector<ir::Tensor> readers;
    for (const auto& s : sch.stages()) {
      if (!s->tensor()->extern_body && ir::Reads(s->body(), {t->buffer.get()}) &&
          (s->inlined() || group.count(s.get()))) {
        readers.push_back(s->tensor());
      }
    }
    auto local = sch.CacheRead(t, "local", readers);
    if (!local.ok()) return local.status();
    ir::Stage& l = sch[*local];
    group.insert(&l);
    absl::Status at = l.ComputeAt(consumer, row, /*thread_private=*/true);
    if (!at.ok()) return at;
    return vectorize_row(l, LeafVars(l).back());
  };
  for (auto it = plan.intermediates.rbegin(); st.ok() && it != plan.intermediates.rend(); ++it) {
    st = keep_at_row(*it);
  }
  for (auto it = plan.inputs.begin(); st.ok() && it != plan.inputs.end(); ++it) {
    st = keep_at_row(*it);
  }
  if (!st.ok()) return st;
  TacticChoice c{consumer.tensor()->name, "row_reduction.persistent_row", plan.why};
  c.knob = plan.knob;
  return c;
}

}  // namespace cinn_like::hlir
