/// \file Functions whose intermediates are not arguments (workspaces), shared by the CUDA
/// codegen tests (no GPU), the GPU tests and the x86 tests.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/tensor.h"

namespace cinn_like::testing {

/// Over float32 of symbolic shape {n}, with intermediates T and U that are not arguments:
///   stages 2: "temps2"(A, B, C): T = A * 2; C = T + B                 (C = 2a + b)
///   stages 3: "temps3"(A, B, C): T = A * 2; U = T + B; C = U * T      (C = (2a + b) * 2a)
/// On NVGPU every stage is split by 256 and bound to blockIdx.x/threadIdx.x (one kernel each);
/// on x86 the loops stay serial, or with `parallel` each stage's loop runs on the thread pool.
inline absl::StatusOr<ir::LoweredFunc> BuildTemporaries(const ir::Target& target, int stages,
                                                        bool parallel = false) {
  ir::Var n("n");
  ir::Tensor a = ir::Placeholder("A", ir::Float(32), {n});
  ir::Tensor b = ir::Placeholder("B", ir::Float(32), {n});
  using Idx = std::vector<ir::Expr>;
  ir::Tensor t = ir::Compute(
      {n}, [&](const Idx& i) { return a(i[0]) * 2.0f; }, "T");
  ir::Tensor c, u;
  if (stages == 2) {
    c = ir::Compute(
        {n}, [&](const Idx& i) { return t(i[0]) + b(i[0]); }, "C");
  } else {
    u = ir::Compute(
        {n}, [&](const Idx& i) { return t(i[0]) + b(i[0]); }, "U");
    c = ir::Compute(
        {n}, [&](const Idx& i) { return u(i[0]) * t(i[0]); }, "C");
  }
  auto sch = ir::Schedule::Create({c});
  std::vector<ir::Tensor> computed = {t, c};
  if (u.defined()) computed = {t, u, c};
  for (auto& tensor : computed) {
    ir::Stage& s = sch[tensor];
    auto axis = s.LeafAxis(0);
    if (!axis.ok()) return axis.status();
    if (!target.is_nvgpu() && parallel) {
      absl::Status p = s.Parallel(*axis);
      if (!p.ok()) return p;
    }
    if (target.is_nvgpu()) {
      auto parts = s.Split(*axis, 256);
      if (!parts.ok()) return parts.status();
      absl::Status bound = s.Bind(parts->first, "blockIdx.x");
      if (bound.ok()) bound = s.Bind(parts->second, "threadIdx.x");
      if (!bound.ok()) return bound;
    }
  }
  return ir::Lower(stages == 2 ? "temps2" : "temps3", {a, b, c}, sch, target);
}

}  // namespace cinn_like::testing
