/// \file Lane extraction of vector expressions (vector_lanes.h).
#include "backends/vector_lanes.h"

#include "ir/intrinsics.h"
#include "ir/mutator.h"
#include "ir/tensor.h"
#include "ir/transforms/simplify.h"
#include "ir/visitor.h"

namespace cinn_like::backends {

const ir::Ramp* DenseRamp(const ir::Expr& index) {
  auto* ramp = index.As<ir::Ramp>();
  return ramp && ir::IsConstInt(ramp->stride, 1) ? ramp : nullptr;
}

ir::Expr Lane(const ir::Expr& e, int k, const LoadHook& hook) {
  if (e.type().is_scalar()) return e;
  auto lane = [&](const ir::Expr& x) { return Lane(x, k, hook); };
  switch (e.kind()) {
    case ir::IrNodeKind::kRamp: {
      auto* op = e.As<ir::Ramp>();
      return k == 0 ? op->base : ir::Simplify(op->base + op->stride * ir::Expr(k));
    }
    case ir::IrNodeKind::kBroadcast:
      return e.As<ir::Broadcast>()->value;
#define CINN_LIKE_LANE_BINARY(name, sym)             \
  case ir::IrNodeKind::k##name: {                    \
    auto* op = e.As<ir::name>();                     \
    return ir::name::Make(lane(op->a), lane(op->b)); \
  }
      CINN_LIKE_BINARY_NODES(CINN_LIKE_LANE_BINARY)
#undef CINN_LIKE_LANE_BINARY
    case ir::IrNodeKind::kNot:
      return ir::Not::Make(lane(e.As<ir::Not>()->a));
    case ir::IrNodeKind::kSelect: {
      auto* op = e.As<ir::Select>();
      return ir::Select::Make(lane(op->cond), lane(op->true_value), lane(op->false_value));
    }
    case ir::IrNodeKind::kCast:
      return ir::Cast::Make(e.type().WithLanes(1), lane(e.As<ir::Cast>()->value));
    case ir::IrNodeKind::kCall: {
      auto* op = e.As<ir::Call>();
      std::vector<ir::Expr> args;
      for (auto& a : op->args) args.push_back(lane(a));
      return op->WithArgs(e.type().WithLanes(1), args);
    }
    case ir::IrNodeKind::kLoad: {
      auto* op = e.As<ir::Load>();
      if (hook) {
        if (ir::Expr r = hook(op, k); r.defined()) return r;
      }
      return ir::Load::Make(op->buffer, {lane(op->indices[0])});
    }
    default:
      return e;  // unreachable for well-typed IR: other nodes are scalar
  }
}

bool HasVectorReduce(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    bool found = false;
    void VisitCall(const ir::Call* op) override {
      found |= op->intrinsic && ir::IsVectorReduce(*op->intrinsic);
      ir::IRVisitor::VisitCall(op);
    }
  } f;
  f.Visit(e);
  return f.found;
}

ir::Expr ExpandVectorReduces(const ir::Expr& e, const LoadHook& hook) {
  struct Expander : ir::IRMutator {
    using ir::IRMutator::Mutate;
    const LoadHook* hook;
    ir::Expr MutateCall(const ir::Call* op, const ir::Expr& self) override {
      if (!op->intrinsic || !ir::IsVectorReduce(*op->intrinsic)) {
        return ir::IRMutator::MutateCall(op, self);
      }
      const ir::Expr& v = op->args[0];
      // The vector reduces are listed in ReduceKind order (ir/intrinsics.h).
      const auto kind = static_cast<ir::ReduceKind>(
          static_cast<int>(ir::ReduceKind::kSum) + static_cast<int>(*op->intrinsic) -
          static_cast<int>(ir::IntrinsicOp::kVectorReduceSum));
      ir::Expr total = Lane(v, 0, *hook);
      for (int k = 1; k < v.type().lanes(); ++k) {
        total = ir::ReduceCombine(kind, total, Lane(v, k, *hook));
      }
      return total;
    }
  } expander;
  expander.hook = &hook;
  return expander.Mutate(e);
}

}  // namespace cinn_like::backends
