/// \file Helpers the op computes (the ops in lang) share: numpy broadcast reads, casts with the
/// reference interpreter's semantics, NaN tests and the float32 widening of low-precision
/// floats. Each op family's ComputeFn factories are declared here too.
#pragma once

#include <string>
#include <vector>

#include "hlir/op.h"
#include "ir/ir.h"
#include "ir/tensor.h"

namespace cinn_like::hlir::ops {

using Indices = std::vector<ir::Expr>;

/// The element of `t` that numpy broadcasting reads for the index `out` of the broadcast
/// result: trailing dims aligned, missing leading dims dropped, known size-1 dims read at 0.
ir::Expr BroadcastRead(const ir::Tensor& t, const Indices& out);
/// Whether `x` is NaN (x != x); the constant false for non-floats.
ir::Expr IsNan(const ir::Expr& x);
/// x != 0 (bool stays as is).
ir::Expr ToBool(const ir::Expr& x);
/// float16 and bfloat16 widened to float32 (what the IR computes them in); others unchanged.
ir::Expr Widen(const ir::Expr& x);
/// A constant of type t.
ir::Expr Const(const ir::Type& t, double v);
/// `x` converted to `t` as hlir::RoundToDType does: floats round to nearest, float to integer
/// truncates toward zero and wraps (NaN and infinities give 0), anything to bool is x != 0.
ir::Expr CastTo(const ir::Type& t, const ir::Expr& x);

/// The computes of the op families (null where an op has none).
ComputeFn UnaryCompute(const std::string& op);
ComputeFn BinaryCompute(const std::string& op);
ComputeFn CastCompute();
ComputeFn WhereCompute();
ComputeFn ReduceCompute(const std::string& op);
ComputeFn ArgReduceCompute(bool is_max);
ComputeFn SoftmaxCompute(bool log);
ComputeFn NormCompute(bool rms);
ComputeFn BatchNormCompute();
ComputeFn MatmulCompute();
ComputeFn LinearCompute();
/// Library-call computes for NVGPU (OpDef::extern_compute); `fallback` serves the cases the
/// library call cannot express (hlir/ops/matmul_extern.cc, conv_extern.cc).
ComputeFn MatmulExternCompute(ComputeFn fallback);
ComputeFn LinearExternCompute(ComputeFn fallback);
ComputeFn Conv2dExternCompute(ComputeFn fallback);
ComputeFn ShapeOpCompute(const std::string& op);

}  // namespace cinn_like::hlir::ops
