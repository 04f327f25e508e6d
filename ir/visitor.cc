/// \file Default traversal: every child, in evaluation order.
#include "ir/visitor.h"

namespace cinn_like::ir {

void IRVisitor::Visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define CINN_LIKE_DISPATCH(name) \
  case IrNodeKind::k##name:      \
    return Visit##name(static_cast<const name*>(e.get()));
    CINN_LIKE_EXPR_NODES(CINN_LIKE_DISPATCH)
#undef CINN_LIKE_DISPATCH
    default:
      break;
  }
}

void IRVisitor::Visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define CINN_LIKE_DISPATCH(name) \
  case IrNodeKind::k##name:      \
    return Visit##name(static_cast<const name*>(s.get()));
    CINN_LIKE_STMT_NODES(CINN_LIKE_DISPATCH)
#undef CINN_LIKE_DISPATCH
    default:
      break;
  }
}

void IRVisitor::VisitIntImm(const IntImm*) {}
void IRVisitor::VisitFloatImm(const FloatImm*) {}
void IRVisitor::VisitStringImm(const StringImm*) {}
void IRVisitor::VisitVariable(const Variable*) {}
#define CINN_LIKE_VISIT_BINARY(name, sym)       \
  void IRVisitor::Visit##name(const name* op) { \
    Visit(op->a);                               \
    Visit(op->b);                               \
  }
CINN_LIKE_BINARY_NODES(CINN_LIKE_VISIT_BINARY)
#undef CINN_LIKE_VISIT_BINARY
void IRVisitor::VisitNot(const Not* op) { Visit(op->a); }
void IRVisitor::VisitSelect(const Select* op) {
  Visit(op->cond);
  Visit(op->true_value);
  Visit(op->false_value);
}
void IRVisitor::VisitCast(const Cast* op) { Visit(op->value); }
void IRVisitor::VisitLoad(const Load* op) {
  for (auto& i : op->indices) Visit(i);
}
void IRVisitor::VisitRamp(const Ramp* op) {
  Visit(op->base);
  Visit(op->stride);
}
void IRVisitor::VisitBroadcast(const Broadcast* op) { Visit(op->value); }
void IRVisitor::VisitCall(const Call* op) {
  for (auto& a : op->args) Visit(a);
}
void IRVisitor::VisitStore(const Store* op) {
  for (auto& i : op->indices) Visit(i);
  Visit(op->value);
}
void IRVisitor::VisitFor(const For* op) {
  Visit(op->min);
  Visit(op->extent);
  Visit(op->body);
}
void IRVisitor::VisitIfThenElse(const IfThenElse* op) {
  Visit(op->cond);
  Visit(op->then_case);
  Visit(op->else_case);
}
void IRVisitor::VisitBlock(const Block* op) {
  for (auto& s : op->stmts) Visit(s);
}
void IRVisitor::VisitEvaluate(const Evaluate* op) { Visit(op->value); }
void IRVisitor::VisitAllocate(const Allocate* op) { Visit(op->body); }
void IRVisitor::VisitLetStmt(const LetStmt* op) {
  Visit(op->value);
  Visit(op->body);
}

}  // namespace cinn_like::ir
