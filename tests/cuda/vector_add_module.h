/// \file The seed vector add, hand-built and bound to the GPU, shared by the CUDA tests (no
/// GPU) and the GPU tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <glog/logging.h>

#include "ir/ir.h"
#include "ir/module.h"
#include "ir/transforms/split_host_device.h"

namespace cinn_like::testing {

/// myadd(A, B, C), float32 of shape {n}, before the host/device split:
///   blockIdx.x for (i_outer, 0, (n + 63) / 64)
///     threadIdx.x for (i_inner, 0, 64)
///       if (i_outer * 64 + i_inner < n) C[i] = A[i] + B[i]   (i = i_outer * 64 + i_inner)
inline ir::LoweredFunc GpuVectorAddFunc(const std::string& name = "myadd") {
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
  return f;
}

/// A module of hand-built GPU host entries, split as ir::Lower splits them for a GPU.
inline ir::Module SplitGpuModule(const std::string& name,
                                 const std::vector<ir::LoweredFunc>& functions) {
  ir::Module m{name, ir::Target::NVGPU(90), {}};
  for (const ir::LoweredFunc& f : functions) {
    auto split = ir::SplitHostDevice(*f);
    CHECK(split.ok()) << split.status();
    m.functions.push_back(*split);
  }
  return m;
}

/// The vector add as a split module: one host entry launching myadd_kernel.
inline ir::Module GpuVectorAdd(const std::string& name = "myadd") {
  return SplitGpuModule(name, {GpuVectorAddFunc(name)});
}

}  // namespace cinn_like::testing
