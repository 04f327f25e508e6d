/// \file FreeVars: the variables a statement reads from outside it.
#include "backends/llvm/free_vars.h"

namespace cinn_like::backends {

void FreeVars::Use(const ir::Expr& e) {
  auto* v = e.As<ir::Variable>();
  if (!v || defined.count(v) || exprs.count(v)) return;
  exprs[v] = e;
  vars.push_back(v);
}

void FreeVars::Visit(const ir::Expr& e) {
  if (e.As<ir::Variable>()) Use(e);
  ir::IRVisitor::Visit(e);
}

void FreeVars::VisitVariable(const ir::Variable* op) {
  // Reached only through Visit(Expr) above, which records the handle.
}

void FreeVars::VisitLoad(const ir::Load* op) {
  Use(op->buffer->data);
  ir::IRVisitor::VisitLoad(op);
}

void FreeVars::VisitStore(const ir::Store* op) {
  Use(op->buffer->data);
  ir::IRVisitor::VisitStore(op);
}

void FreeVars::VisitFor(const ir::For* op) {
  defined.insert(op->loop_var.node());
  ir::IRVisitor::VisitFor(op);
}

void FreeVars::VisitLetStmt(const ir::LetStmt* op) {
  defined.insert(op->var.node());
  ir::IRVisitor::VisitLetStmt(op);
}

void FreeVars::VisitAllocate(const ir::Allocate* op) {
  defined.insert(op->buffer->data.node());
  for (auto& d : op->buffer->shape) Visit(d);
  ir::IRVisitor::VisitAllocate(op);
}

}  // namespace cinn_like::backends
