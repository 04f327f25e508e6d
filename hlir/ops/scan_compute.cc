/// \file The scans in lang: each output is an extern tensor whose statement is the loop nest
/// itself, a loop over the lines (parallel on the CPU, a thread per line on GPUs) around a
/// serial loop along the axis that carries the running value in a one-element local buffer.
/// An extern's statement is never scheduled, so nothing can vectorize or bind the serial loop.
/// cummax/cummin make their two outputs with two nests (each keeps the running value and
/// index in locals), so either one can be read alone.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"
#include "hlir/ops/scan.h"
#include "ir/math.h"
#include "ir/tensor.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Stmt;
using ir::Tensor;
using Tensors = absl::StatusOr<std::vector<Tensor>>;

/// Threads per block on GPUs (a warp multiple below every GPU's limit).
constexpr int kThreads = 256;
/// CPU scans of at least this many elements run their lines on the thread pool.
constexpr int64_t kParallelMinElements = 4096;

/// The type the running value lives in: float32 for float16 and bfloat16, int32 for bool
/// (compared as 0/1), the dtype itself otherwise.
ir::Type RunningType(const ir::Type& t) {
  if (t.is_low_precision_float()) return ir::Float(32);
  if (t.is_bool()) return ir::Int(32);
  return t;
}

/// The running value's start: the identity of the combine (max and min: the lowest and
/// highest value, which the first element always replaces).
Expr Init(ScanKind kind, const ir::Type& t) {
  switch (kind) {
    case ScanKind::kSum:
      return ir::ReduceInit(ir::ReduceKind::kSum, t);
    case ScanKind::kProd:
      return ir::ReduceInit(ir::ReduceKind::kProd, t);
    case ScanKind::kMax:
      return ir::ReduceInit(ir::ReduceKind::kMax, t);
    case ScanKind::kMin:
    case ScanKind::kLogSumExp:
      break;
  }
  return kind == ScanKind::kMin ? ir::ReduceInit(ir::ReduceKind::kMin, t)
                                : Const(t, -INFINITY);  // log Σ over nothing
}

/// Whether x replaces the running max/min r: x is NaN, or r is not and x >= r (x <= r), so
/// that ties move the index to the last occurrence.
Expr Replaces(ScanKind kind, const Expr& r, const Expr& x) {
  Expr better = kind == ScanKind::kMax ? x >= r : x <= r;
  if (!x.type().is_float()) return better;
  return IsNan(x) || (!IsNan(r) && better);
}

/// logcumsumexp's step, running = log(exp(r) + exp(x)) as max + log1p(exp(min - max)): a NaN
/// on either side propagates (through the selects' comparisons), and equal infinities give x.
Stmt LogAddExp(const ir::Buffer& running, const Expr& r, const Expr& x) {
  ir::Var hi("hi", x.type()), lo("lo", x.type());
  Expr same_infinity =
      hi == lo && ir::MathCall(ir::MathOp::kAbs, {hi}) == Const(hi.type(), INFINITY);
  Expr sum = hi + ir::MathCall(ir::MathOp::kLog1p, {ir::Exp(lo - hi)});
  Stmt store = ir::Store::Make(running, {Expr(0)}, ir::Select::Make(same_infinity, x, sum));
  return ir::LetStmt::Make(hi, ir::Select::Make(x > r, x, r),
                           ir::LetStmt::Make(lo, ir::Select::Make(x > r, r, x), store));
}

/// The product of `dims`, folded where they are known.
Expr Product(const std::vector<Expr>& dims) {
  int64_t known = 1;
  Expr symbolic;
  for (const Expr& d : dims) {
    if (const int64_t* c = ir::AsConstInt(d)) {
      known *= *c;
    } else {
      symbolic = symbolic.defined() ? symbolic * d : d;
    }
  }
  const Expr k(static_cast<int>(known));
  if (!symbolic.defined()) return k;
  return known == 1 ? symbolic : symbolic * k;
}

/// One nest: the scan's values, or (cummax/cummin) its indices.
struct ScanNest {
  ScanKind kind;
  bool indices;
  int axis;
  bool gpu;

  Stmt Build(const ir::Buffer& x, const ir::Buffer& out) const {
    const std::vector<Expr>& shape = x->shape;
    const int rank = static_cast<int>(shape.size());
    std::vector<Expr> line_dims;
    for (int d = 0; d < rank; ++d) {
      if (d != axis) line_dims.push_back(shape[d]);
    }
    const Expr lines = Product(line_dims), elements = Product(shape);
    ir::Var line("line"), k("k");
    // The element k of the line: the line's index split row-major over every dim but `axis`.
    std::vector<Expr> at(rank, Expr(0));
    Expr rest = line;
    int remaining = 0;
    for (int d = 0; d < rank; ++d) remaining += d != axis && !ir::IsConstInt(shape[d], 1);
    for (int d = rank - 1; d >= 0; --d) {
      if (d == axis || ir::IsConstInt(shape[d], 1)) continue;
      at[d] = --remaining > 0 ? rest % shape[d] : rest;
      rest = rest / shape[d];
    }
    at[axis] = k;

    const ir::Type t = x->dtype, rt = RunningType(t);
    ir::Buffer running =
        ir::MakeBuffer(out->name + "_running", rt, {Expr(1)}, ir::MemoryScope::kLocal);
    ir::Buffer best =
        ir::MakeBuffer(out->name + "_index", ir::Int(64), {Expr(1)}, ir::MemoryScope::kLocal);
    const Expr r = ir::Load::Make(running, {Expr(0)});
    ir::Var v("x_k", rt);  // the element, in the running value's type
    std::vector<Stmt> step;
    switch (kind) {
      case ScanKind::kSum:
        step.push_back(ir::Store::Make(running, {Expr(0)}, r + v));
        break;
      case ScanKind::kProd:
        step.push_back(ir::Store::Make(running, {Expr(0)}, r * v));
        break;
      case ScanKind::kLogSumExp:
        step.push_back(LogAddExp(running, r, v));
        break;
      case ScanKind::kMax:
      case ScanKind::kMin: {
        Stmt take = ir::Store::Make(running, {Expr(0)}, v);
        if (indices) {
          take = ir::Block::Make(
              {take, ir::Store::Make(best, {Expr(0)}, ir::Cast::Make(ir::Int(64), k))});
        }
        step.push_back(ir::IfThenElse::Make(Replaces(kind, r, v), take));
        break;
      }
    }
    step.push_back(
        ir::Store::Make(out, at, indices ? ir::Load::Make(best, {Expr(0)}) : CastTo(t, r)));
    const Expr element = ir::Load::Make(x, at);
    Stmt walk = ir::For::Make(k, Expr(0), shape[axis], ir::ForKind::kSerial,
                              ir::LetStmt::Make(v, rt == t ? element : ir::Cast::Make(rt, element),
                                                ir::Block::Make(step)));
    std::vector<Stmt> body{ir::Store::Make(running, {Expr(0)}, Init(kind, rt))};
    if (indices) body.push_back(ir::Store::Make(best, {Expr(0)}, Const(ir::Int(64), 0)));
    body.push_back(walk);
    Stmt per_line = ir::Block::Make(body);
    if (indices) per_line = ir::Allocate::Make(best, per_line);
    per_line = ir::Allocate::Make(running, per_line);
    return gpu ? OnThreads(line, lines, per_line) : OnCpu(line, lines, elements, per_line);
  }

  /// The lines as one loop, on the thread pool when the scan is large (or symbolic) and has
  /// more than one line.
  static Stmt OnCpu(const ir::Var& line, const Expr& lines, const Expr& elements,
                    const Stmt& per_line) {
    const int64_t* n = ir::AsConstInt(elements);
    const int64_t* l = ir::AsConstInt(lines);
    const bool parallel = (!n || *n >= kParallelMinElements) && (!l || *l > 1);
    return ir::For::Make(line, Expr(0), lines,
                         parallel ? ir::ForKind::kParallel : ir::ForKind::kSerial, per_line);
  }

  /// line = blockIdx.x * threads + threadIdx.x, guarded by line < lines; fewer threads (a warp
  /// multiple) for fewer known lines.
  static Stmt OnThreads(const ir::Var& line, const Expr& lines, const Stmt& per_line) {
    int threads = kThreads;
    if (const int64_t* l = ir::AsConstInt(lines)) {
      threads = static_cast<int>(std::clamp<int64_t>((*l + 31) / 32 * 32, 32, kThreads));
    }
    ir::Var block("line_block"), thread("line_thread");
    Stmt guarded = ir::LetStmt::Make(line, block * threads + thread,
                                     ir::IfThenElse::Make(line < lines, per_line));
    Stmt on_threads =
        ir::For::Make(thread, Expr(0), Expr(threads), ir::ForKind::kGpuThread, guarded, 0);
    return ir::For::Make(block, Expr(0), (lines + (threads - 1)) / threads, ir::ForKind::kGpuBlock,
                         on_threads, 0);
  }
};

}  // namespace

ComputeFn ScanCompute(ScanKind kind, bool gpu) {
  return [kind, gpu](const std::vector<Tensor>& in, const AttributeMap& attrs,
                     const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    const Tensor& x = in[0];
    const int rank = static_cast<int>(x->shape.size());
    auto axes = AxisAttrAxes(ScanName(kind), attrs, std::max(rank, 1), std::nullopt);
    if (!axes.ok()) return axes.status();
    const int axis = (*axes)[0];
    std::vector<Tensor> made;
    for (size_t o = 0; o < outs.size(); ++o) {
      ScanNest nest{kind, o == 1, axis, gpu};
      made.push_back(
          ir::ExternTensor(o == 0 ? name : absl::StrCat(name, "_", o), outs[o].type, outs[o].shape,
                           {x}, [nest](const std::vector<ir::Buffer>& b, const ir::Buffer& out) {
                             return nest.Build(b[0], out);
                           }));
    }
    return made;
  };
}

}  // namespace cinn_like::hlir::ops
