/// \file A read-only recursive walk over the IR; override the nodes you care about.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  /// Dispatches on the node kind; undefined handles are ignored.
  virtual void Visit(const Expr& e);
  virtual void Visit(const Stmt& s);

 protected:
#define CINN_LIKE_DECLARE_VISIT(name) virtual void Visit##name(const name* op);
  CINN_LIKE_ALL_NODES(CINN_LIKE_DECLARE_VISIT)
#undef CINN_LIKE_DECLARE_VISIT
};

}  // namespace cinn_like::ir
