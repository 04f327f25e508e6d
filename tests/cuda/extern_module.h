/// \file Functions with an extern library call between elementwise stages, shared by the
/// NVGPU codegen tests (no GPU) and the GPU tests: Pre = X * 2 (a kernel), E = extern(Pre,
/// other inputs) (a host call), Out = E + 1 (a kernel); Pre and E are device workspaces.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/attribute.h"
#include "hlir/op.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/tensor.h"

namespace cinn_like::testing {

/// All loops of `s` fused, split by 256 and bound to blockIdx.x / threadIdx.x.
inline absl::Status BindFlat(ir::Stage& s) {
  auto v = s.LeafAxis(0);
  if (!v.ok()) return v.status();
  ir::Var fused = *v;
  while (s.leaves().size() > 1) {
    auto next = s.LeafAxis(1);
    if (!next.ok()) return next.status();
    auto f = s.Fuse(fused, *next);
    if (!f.ok()) return f.status();
    fused = *f;
  }
  auto parts = s.Split(fused, 256);
  if (!parts.ok()) return parts.status();
  absl::Status st = s.Bind(parts->first, "blockIdx.x");
  if (st.ok()) st = s.Bind(parts->second, "threadIdx.x");
  return st;
}

/// `name`(X, inputs..., Out): Pre = X * 2; E = extern_compute(Pre, inputs...); Out = E + 1,
/// with the op's extern compute for `target` building E of `out_shape` (an error if the
/// compute declines).
inline absl::StatusOr<ir::LoweredFunc> BuildExternSandwich(
    const std::string& name, const hlir::ExternComputeFn& extern_compute,
    const hlir::AttributeMap& attrs, ir::Type t, std::vector<ir::Expr> x_shape,
    const std::vector<ir::Tensor>& inputs, std::vector<ir::Expr> out_shape,
    const ir::Target& target) {
  using Idx = std::vector<ir::Expr>;
  ir::Tensor x = ir::Placeholder("X", t, x_shape);
  ir::Tensor pre = ir::Compute(
      x_shape, [&](const Idx& i) { return x(i) * ir::MakeConst(t, 2); }, "Pre");
  std::vector<ir::Tensor> in{pre};
  in.insert(in.end(), inputs.begin(), inputs.end());
  auto e = extern_compute(target, in, attrs, {{t, out_shape}}, "E");
  if (!e.ok()) return e.status();
  if (e->tensors.empty()) return absl::FailedPreconditionError("declined: " + e->why);
  ir::Tensor ext = e->tensors[0];
  ir::Tensor out = ir::Compute(
      out_shape, [&](const Idx& i) { return ext(i) + ir::MakeConst(t, 1); }, "Out");
  auto sch = ir::Schedule::Create({out});
  for (const ir::Tensor& s : {pre, out}) {
    absl::Status st = BindFlat(sch[s]);
    if (!st.ok()) return st;
  }
  std::vector<ir::Tensor> args{x};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.push_back(out);
  return ir::Lower(name, args, sch, target);
}

}  // namespace cinn_like::testing
