/// \file A GPU kernel whose unrolled loop holds copies of a blocked sum, for the C printers'
/// scope tests (CUDA through NVRTC, OpenCL through its device compiler): each copy declares the
/// same partials (<X>_block and <X>_tail, ir/transforms/block_reductions.h) as siblings.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/tensor.h"

namespace cinn_like::testing {

/// The rows' length: one block of 4096 and a rest of 3.
constexpr int kUnrolledSumsLength = 4096 + 3;

/// C[i, j] = sum_k A[i, j, k] over float32 (n, 2, kUnrolledSumsLength), i split by 64 and bound
/// to blockIdx.x/threadIdx.x, j unrolled: two copies of the sum over k, each with its partials
/// C_block (its one block's loop removed) and C_tail, side by side in the thread's body.
inline absl::StatusOr<ir::LoweredFunc> UnrolledBlockedSums(const ir::Target& target) {
  ir::Var n("n");
  ir::Tensor a =
      ir::Placeholder("A", ir::Float(32), {n, ir::Expr(2), ir::Expr(kUnrolledSumsLength)});
  ir::IterVar k = ir::ReduceAxis(ir::Expr(kUnrolledSumsLength), "k");
  ir::Tensor c = ir::Compute(
      {n, ir::Expr(2)},
      [&](const std::vector<ir::Expr>& i) { return ir::ReduceSum(a(i[0], i[1], k.var), {k}); },
      "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  auto i = s.LeafAxis(0);
  auto j = s.LeafAxis(1);
  if (!i.ok()) return i.status();
  if (!j.ok()) return j.status();
  auto parts = s.Split(*i, 64);
  if (!parts.ok()) return parts.status();
  if (auto st = s.Bind(parts->first, "blockIdx.x"); !st.ok()) return st;
  if (auto st = s.Bind(parts->second, "threadIdx.x"); !st.ok()) return st;
  if (auto st = s.Unroll(*j, /*full=*/true); !st.ok()) return st;
  return ir::Lower("unrolled_sums", {a, c}, sch, target);
}

}  // namespace cinn_like::testing
