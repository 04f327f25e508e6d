/// \file FreeVars: what an outlined piece of host code (a parallel loop's body, a part of a long
/// entry) must capture from the function around it.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "ir/visitor.h"

namespace cinn_like::backends {

/// The variables a statement reads that it does not define itself (loop indices and allocated
/// buffers inside it are defined there), buffer base addresses included, in first-use order.
class FreeVars : public ir::IRVisitor {
 public:
  std::vector<const ir::Variable*> vars;
  std::map<const ir::Variable*, ir::Expr> exprs;
  std::set<const ir::Variable*> defined;

  void Use(const ir::Expr& e);

  using ir::IRVisitor::Visit;
  void Visit(const ir::Expr& e) override;

 protected:
  void VisitVariable(const ir::Variable* op) override;
  void VisitLoad(const ir::Load* op) override;
  void VisitStore(const ir::Store* op) override;
  void VisitFor(const ir::For* op) override;
  void VisitLetStmt(const ir::LetStmt* op) override;
  void VisitAllocate(const ir::Allocate* op) override;
};

}  // namespace cinn_like::backends
