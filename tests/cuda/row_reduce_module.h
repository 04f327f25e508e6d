/// \file Row reductions B[i] = reduce_j A[i, j] over symbolic (m, n) with their reduce axis
/// bound to threadIdx.x, for the CUDA codegen tests and the GPU tests.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/tensor.h"

namespace cinn_like::testing {

/// `rows_per_block` 0: i bound to blockIdx.x, one row per block. Otherwise i is split by it,
/// the parts bound to blockIdx.x and threadIdx.y (several rows per block). In both, j is split
/// by `threads` and the inner part (coalesced: j = j_outer * threads + tx) is threadIdx.x.
inline absl::StatusOr<ir::LoweredFunc> RowReduce(const std::string& name, ir::ReduceKind kind,
                                                 int threads, int rows_per_block = 0,
                                                 ir::Type dtype = ir::Float(32)) {
  ir::Var m("m"), n("n");
  ir::Tensor a = ir::Placeholder("A", dtype, {m, n});
  ir::IterVar j = ir::ReduceAxis(n, "j");
  ir::Tensor b = ir::Compute(
      {m},
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr v = a(i[0], j.var);
        if (kind == ir::ReduceKind::kMax) return ir::ReduceMax(v, {j});
        if (kind == ir::ReduceKind::kMin) return ir::ReduceMin(v, {j});
        if (kind == ir::ReduceKind::kProd) return ir::ReduceProd(v, {j});
        return ir::ReduceSum(v, {j});
      },
      "B");
  auto sch = ir::Schedule::Create({b});
  ir::Stage& s = sch[b];
  auto i = s.LeafAxis(0);
  if (!i.ok()) return i.status();
  auto parts = s.Split(j.var, threads);
  if (!parts.ok()) return parts.status();
  absl::Status st;
  if (rows_per_block == 0) {
    st = s.Bind(*i, "blockIdx.x");
  } else {
    auto rows = s.Split(*i, rows_per_block);
    if (!rows.ok()) return rows.status();
    st = s.Bind(rows->first, "blockIdx.x");
    if (st.ok()) st = s.Bind(rows->second, "threadIdx.y");
  }
  if (st.ok()) st = s.Bind(parts->second, "threadIdx.x");
  if (!st.ok()) return st;
  return ir::Lower(name, {a, b}, sch, ir::Target::NVGPU(90));
}

}  // namespace cinn_like::testing
