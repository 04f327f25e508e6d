/// \file The default schedules.
#include "hlir/auto_schedule.h"

#include <vector>

#include "ir/substitute.h"
#include "ir/visitor.h"

namespace cinn_like::hlir {
namespace {

/// Threads per block of the GPU schedules (a choice, within every GPU's max_threads_per_block).
constexpr int kThreads = 256;
/// CPU stages large enough (or symbolic) to run their outermost loop on the thread pool.
constexpr int64_t kParallelMinElements = 4096;

struct Leaves {
  std::vector<ir::Var> spatial, reduce;
};

Leaves SplitLeaves(const ir::Stage& s) {
  Leaves l;
  for (int idx : s.leaves()) {
    const ir::Stage::Axis& a = s.axes()[idx];
    (a.is_reduce ? l.reduce : l.spatial).push_back(a.var);
  }
  return l;
}

/// The product of the extents of `vars`' axes, or -1 when one is symbolic.
int64_t StaticExtent(const ir::Stage& s, const std::vector<ir::Var>& vars) {
  int64_t n = 1;
  for (const ir::Var& v : vars) {
    for (const ir::Stage::Axis& a : s.axes()) {
      if (a.var.get() != v.get()) continue;
      const int64_t* c = ir::AsConstInt(a.extent);
      if (!c) return -1;
      n *= *c;
    }
  }
  return n;
}

absl::Status ScheduleCpu(ir::Stage& s, StageKind kind, const ir::Target& target) {
  Leaves l = SplitLeaves(s);
  if (l.spatial.empty()) return absl::OkStatus();
  int64_t total = StaticExtent(s, l.spatial);
  ir::Var outer = l.spatial[0];
  if (kind == StageKind::kElementwise) {
    // One vector register of float32 lanes (8 on AVX2), whatever the stage's dtype.
    const int lanes = target.vector_lanes(32);
    int64_t inner = StaticExtent(s, {l.spatial.back()});
    if (inner > 0 && inner % lanes == 0) {
      auto v = s.Vectorize(l.spatial.back(), lanes);
      if (!v.ok()) return v.status();
      if (l.spatial.size() == 1) outer = *s.LeafAxis(0);
    }
  }
  if (target.has_parallel_loops() && (total < 0 || total >= kParallelMinElements)) {
    return s.Parallel(outer);
  }
  return absl::OkStatus();
}

absl::Status BindThreads(ir::Stage& s, const ir::Var& fused, int threads) {
  auto parts = s.Split(fused, threads);
  if (!parts.ok()) return parts.status();
  absl::Status st = s.Bind(parts->first, "blockIdx.x");
  if (st.ok()) st = s.Bind(parts->second, "threadIdx.x");
  return st;
}

absl::Status ScheduleGpu(ir::Stage& s, StageKind kind, const ir::Target& target) {
  Leaves l = SplitLeaves(s);
  if (kind == StageKind::kReduction && !l.spatial.empty() && IsColumnReduction(s)) {
    // Threads over the contiguous spatial axis, each reducing serially (coalesced loads).
    kind = StageKind::kMatmul;
  }
  if (kind != StageKind::kReduction) {
    if (l.spatial.empty()) return absl::OkStatus();
    auto fused = FuseAll(s, l.spatial);
    if (!fused.ok()) return fused.status();
    int64_t inner = StaticExtent(s, {l.spatial.back()});
    const int lanes = target.vector_lanes(32);
    if (kind == StageKind::kElementwise && s.tensor()->dtype == ir::Float(32) && inner > 0 &&
        inner % lanes == 0) {
      // One vector of float32 lanes per thread (float4 where the accesses are contiguous).
      auto parts = s.Split(*fused, lanes);
      if (!parts.ok()) return parts.status();
      absl::Status st = s.Vectorize(parts->second);
      if (!st.ok()) return st;
      return BindThreads(s, parts->first, kThreads);
    }
    return BindThreads(s, *fused, kThreads);
  }
  if (!l.spatial.empty()) {
    auto fused = FuseAll(s, l.spatial);
    if (!fused.ok()) return fused.status();
    absl::Status st = s.Bind(*fused, "blockIdx.x");
    if (!st.ok()) return st;
  }
  if (l.reduce.empty()) return absl::OkStatus();
  auto r = FuseAll(s, l.reduce);
  if (!r.ok()) return r.status();
  // Fewer threads for short reductions: a multiple of the warp size covering the extent.
  int threads = RowThreads(StaticExtent(s, {*r}), target);
  auto parts = s.Split(*r, threads);
  if (!parts.ok()) return parts.status();
  return s.Bind(parts->second, "threadIdx.x");
}

}  // namespace

bool IsColumnReduction(const ir::Stage& s) {
  struct Finder : ir::IRVisitor {
    std::vector<const ir::Variable*> reduce;
    bool row = false;
    using ir::IRVisitor::Visit;
    void VisitLoad(const ir::Load* op) override {
      for (const ir::Variable* v : reduce) {
        if (!op->indices.empty() && ir::UsesVar(op->indices.back(), v)) row = true;
      }
      ir::IRVisitor::VisitLoad(op);
    }
  } f;
  for (int d = s.rank(); d < s.num_root_axes(); ++d)
    f.reduce.push_back(s.axes()[d].var.As<ir::Variable>());
  f.Visit(s.InlinedBody());
  return !f.row;
}

absl::StatusOr<ir::Var> FuseAll(ir::Stage& s, const std::vector<ir::Var>& vars) {
  if (vars.empty()) {
    return absl::InternalError(absl::StrCat("stage ", s.tensor()->name, ": no axes to fuse"));
  }
  ir::Var fused = vars[0];
  for (size_t i = 1; i < vars.size(); ++i) {
    auto f = s.Fuse(fused, vars[i]);
    if (!f.ok()) return f.status();
    fused = *f;
  }
  return fused;
}

int RowThreads(int64_t extent, const ir::Target& target) {
  const int64_t warp = target.warp_size();
  if (extent > 0 && extent < kThreads) return static_cast<int>((extent + warp - 1) / warp * warp);
  return kThreads;
}

constexpr int kBlockTile = 64, kThreadTile = 4, kKTile = 8;

bool CanTileMatmul(const ir::Schedule& sch, const ir::Stage& s) {
  const ir::TensorNode& t = *s.tensor().node();
  if (t.reduce != ir::ReduceKind::kSum || t.dtype != ir::Float(32) || s.rank() != 2 ||
      s.num_root_axes() != 3 || t.inputs.size() != 2) {
    return false;
  }
  const int tiles[3] = {kBlockTile, kBlockTile, kKTile};
  for (int d = 0; d < 3; ++d) {
    const int64_t* c = ir::AsConstInt(s.axes()[d].extent);
    if (!c || *c % tiles[d] != 0) return false;
  }
  for (const auto& in : t.inputs) {
    if (in->is_placeholder || in->extern_body) continue;
    for (const auto& st : sch.stages()) {
      if (st->tensor().node() == in && (st->inlined() || st->attach())) return false;
    }
  }
  return true;
}

absl::Status TileMatmul(ir::Schedule& sch, const ir::Tensor& c) {
  constexpr int bt = kBlockTile, tt = kThreadTile, kt = kKTile, side = bt / tt;
  constexpr int threads = side * side;
  const ir::TensorNode& t = *c.node();
  ir::Tensor a(t.inputs[0]), b(t.inputs[1]);
  auto c_local = sch.CacheWrite(c, "local");
  if (!c_local.ok()) return c_local.status();
  auto a_shared = sch.CacheRead(a, "shared", {*c_local});
  if (!a_shared.ok()) return a_shared.status();
  auto b_shared = sch.CacheRead(b, "shared", {*c_local});
  if (!b_shared.ok()) return b_shared.status();
  // C: block tiles; thread (ty, tx) owns rows ty + r * side and columns tx + c * side.
  ir::Stage& sc = sch[c];
  auto i = sc.LeafAxis(0), j = sc.LeafAxis(1);
  if (!i.ok() || !j.ok()) return absl::InternalError("matmul tiles: output axes");
  auto tiles = sc.Tile(*i, *j, bt, bt);
  if (!tiles.ok()) return tiles.status();
  auto r = sc.Split((*tiles)[2], side);
  if (!r.ok()) return r.status();
  auto c2 = sc.Split((*tiles)[3], side);
  if (!c2.ok()) return c2.status();
  absl::Status st =
      sc.Reorder({(*tiles)[0], (*tiles)[1], r->second, c2->second, r->first, c2->first});
  if (st.ok()) st = sc.Unroll(r->first);
  if (st.ok()) st = sc.Unroll(c2->first);
  if (st.ok()) st = sc.Bind((*tiles)[0], "blockIdx.y");
  if (st.ok()) st = sc.Bind((*tiles)[1], "blockIdx.x");
  if (st.ok()) st = sc.Bind(r->second, "threadIdx.y");
  if (st.ok()) st = sc.Bind(c2->second, "threadIdx.x");
  if (!st.ok()) return st;
  // C_local: the thread's accumulators, k in slices.
  ir::Stage& sl = sch[*c_local];
  st = sl.ComputeAt(sc, c2->second);
  if (!st.ok()) return st;
  auto li = sl.LeafAxis(0), lj = sl.LeafAxis(1), lk = sl.LeafAxis(2);
  if (!li.ok() || !lj.ok() || !lk.ok()) return absl::InternalError("matmul tiles: local axes");
  auto ks = sl.Split(*lk, kt);
  if (!ks.ok()) return ks.status();
  st = sl.Reorder({ks->first, ks->second, *li, *lj});
  if (st.ok()) st = sl.Unroll(ks->second);
  if (st.ok()) st = sl.Unroll(*li);
  if (st.ok()) st = sl.Unroll(*lj);
  if (!st.ok()) return st;
  // The A and B slices, copied into shared memory by all threads at each k step.
  for (const ir::Tensor& cache : {*a_shared, *b_shared}) {
    ir::Stage& s = sch[cache];
    st = s.ComputeAt(sl, ks->first);
    if (!st.ok()) return st;
    auto x = s.LeafAxis(0), y = s.LeafAxis(1);
    if (!x.ok() || !y.ok()) return absl::InternalError("matmul tiles: cache axes");
    auto fused = s.Fuse(*x, *y);
    if (!fused.ok()) return fused.status();
    auto per_thread = s.Split(*fused, threads);
    if (!per_thread.ok()) return per_thread.status();
    st = s.Unroll(per_thread->first);
    if (!st.ok()) return st;
    auto tx = s.Split(per_thread->second, side);
    if (!tx.ok()) return tx.status();
    st = s.Bind(tx->first, "threadIdx.y");
    if (st.ok()) st = s.Bind(tx->second, "threadIdx.x");
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status AutoSchedule(ir::Stage& stage, StageKind kind, const ir::Target& target) {
  return target.is_gpu() ? ScheduleGpu(stage, kind, target) : ScheduleCpu(stage, kind, target);
}

}  // namespace cinn_like::hlir
