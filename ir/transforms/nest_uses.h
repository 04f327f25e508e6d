/// \file What one top-level statement of a GPU host entry is (host code, or a loop nest) and
/// uses: its bound loops' launch dims, the buffers it reads and writes, its variables.
/// SplitHostDevice makes kernels from it; GroupIndependentNests decides from it which nests may
/// share a kernel.
#pragma once

#include <array>
#include <set>
#include <string>
#include <utility>

#include "ir/intrinsics.h"
#include "ir/ir.h"
#include "ir/structural_equal.h"
#include "ir/transforms/simplify.h"
#include "ir/visitor.h"

namespace cinn_like::ir {

/// Whether top-level statement `s` of a host entry is host code as it is: a library call
/// (extern_call) or the launch of a kernel the backend supplies (an extern tensor's statement,
/// as the fused attention kernel's launch_kernel).
inline bool IsHostCall(const Stmt& s) {
  auto* eval = s.As<Evaluate>();
  auto* call = eval ? eval->value.As<Call>() : nullptr;
  return call && (call->is_intrinsic(IntrinsicOp::kExternCall) ||
                  call->is_intrinsic(IntrinsicOp::kLaunchKernel));
}

/// The bytes of a buffer of constant shape, or -1 where a dim is symbolic.
inline int64_t ConstantBytes(const Buffer& b) {
  int64_t bytes = b->dtype.bytes();
  for (const Expr& d : b->shape) {
    const int64_t* c = AsConstInt(d);
    if (!c) return -1;
    bytes *= *c;
  }
  return bytes;
}

/// What a statement uses, filled by Visit(statement).
class NestUses : public IRVisitor {
 public:
  using IRVisitor::Visit;
  std::array<Expr, 3> grid{}, block{};  // per axis: the largest extent bound to it
  bool bound = false, has_loop = false;
  std::set<const BufferNode*> read, written;
  std::set<const Variable*> vars, loop_vars;  // loop_vars: bound inside (loops, lets)
  int64_t shared_bytes = 0;                   // of shared-scope Allocates (constant sizes)
  // The block reduces it calls, by op and type: each (op, type) is a helper instantiation with
  // shared arrays of its own (backends/cuda/block_reduce_source.cc).
  std::set<std::pair<int, std::string>> block_reduces;

 protected:
  void VisitFor(const For* op) override {
    loop_vars.insert(op->loop_var.node());
    has_loop = true;
    if (op->for_kind == ForKind::kGpuBlock || op->for_kind == ForKind::kGpuThread) {
      bound = true;
      Expr& dim = (op->for_kind == ForKind::kGpuBlock ? grid : block)[op->bind_axis];
      if (!dim.defined() || StructuralEqual(dim, op->extent)) {
        dim = op->extent;  // equal extents stay themselves (symbolic ones too)
      } else {
        dim = Simplify(max(dim, op->extent));
      }
    }
    IRVisitor::VisitFor(op);
  }
  void VisitVariable(const Variable* op) override { vars.insert(op); }
  void VisitLetStmt(const LetStmt* op) override {
    loop_vars.insert(op->var.node());  // bound inside the kernel, like a loop index
    IRVisitor::VisitLetStmt(op);
  }
  void VisitLoad(const Load* op) override {
    read.insert(op->buffer.get());
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    written.insert(op->buffer.get());
    IRVisitor::VisitStore(op);
  }
  void VisitCall(const Call* op) override {
    if (op->intrinsic && IsBlockReduce(*op->intrinsic)) {
      block_reduces.emplace(static_cast<int>(*op->intrinsic), op->type.ToString());
    }
    IRVisitor::VisitCall(op);
  }
  void VisitAllocate(const Allocate* op) override {
    if (op->buffer->scope == MemoryScope::kShared) {
      const int64_t bytes = ConstantBytes(op->buffer);
      shared_bytes += bytes < 0 ? kUnknownBytes : bytes;
    }
    IRVisitor::VisitAllocate(op);
  }

 public:
  /// The size counted for a shared buffer of symbolic shape: more than any kernel may have.
  static constexpr int64_t kUnknownBytes = int64_t{1} << 40;
};

}  // namespace cinn_like::ir
