/// \file A rewriting walk over the IR: each Mutate returns the node itself when nothing
/// below it changed, so unchanged subtrees stay shared.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr Mutate(const Expr& e);
  virtual Stmt Mutate(const Stmt& s);

 protected:
  // `self` is the handle of `op`, to return when nothing changed.
#define CINN_LIKE_DECLARE_MUTATE_EXPR(name) \
  virtual Expr Mutate##name(const name* op, const Expr& self);
  CINN_LIKE_EXPR_NODES(CINN_LIKE_DECLARE_MUTATE_EXPR)
#undef CINN_LIKE_DECLARE_MUTATE_EXPR
#define CINN_LIKE_DECLARE_MUTATE_STMT(name) \
  virtual Stmt Mutate##name(const name* op, const Stmt& self);
  CINN_LIKE_STMT_NODES(CINN_LIKE_DECLARE_MUTATE_STMT)
#undef CINN_LIKE_DECLARE_MUTATE_STMT

  /// Mutates each element; true when any changed.
  bool MutateAll(const std::vector<Expr>& in, std::vector<Expr>* out);
};

}  // namespace cinn_like::ir
