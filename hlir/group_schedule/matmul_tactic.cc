/// \file The GPU matmul tactic: shared-memory tiles.
#include "hlir/group_schedule/matmul_tactic.h"

namespace cinn_like::hlir {

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

}  // namespace cinn_like::hlir
