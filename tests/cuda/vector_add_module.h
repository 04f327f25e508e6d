/// \file The seed vector add, hand-built and bound to the GPU, shared by the CUDA tests (no
/// GPU) and the GPU tests.
#pragma once

#include <memory>
#include <string>

#include "ir/ir.h"
#include "ir/module.h"

namespace cinn_like::testing {

/// myadd(A, B, C), float32 of shape {n}:
///   blockIdx.x for (i_outer, 0, (n + 63) / 64)
///     threadIdx.x for (i_inner, 0, 64)
///       if (i_outer * 64 + i_inner < n) C[i] = A[i] + B[i]   (i = i_outer * 64 + i_inner)
inline ir::Module GpuVectorAdd(const std::string& name = "myadd") {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto b = ir::MakeBuffer("B", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  ir::Var outer("i_outer"), inner("i_inner");
  ir::Expr i = outer * 64 + inner;
  ir::Stmt body = ir::For::Make(
      outer, 0, (n + 63) / 64, ir::ForKind::kGpuBlock,
      ir::For::Make(
          inner, 0, 64, ir::ForKind::kGpuThread,
          ir::IfThenElse::Make(
              i < n, ir::Store::Make(c, {i}, ir::Load::Make(a, {i}) + ir::Load::Make(b, {i}))),
          0),
      0);
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = name;
  f->kind = ir::LoweredFuncNode::Kind::kHostEntry;
  f->args = {ir::Argument::Input(a), ir::Argument::Input(b), ir::Argument::Output(c)};
  f->body = body;
  ir::Module m;
  m.name = name;
  m.target = ir::Target::NVGPU(90);
  m.functions = {f};
  return m;
}

}  // namespace cinn_like::testing
