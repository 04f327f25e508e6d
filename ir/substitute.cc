/// \file Variable substitution and use queries.
#include "ir/substitute.h"

#include "ir/mutator.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  using IRMutator::Mutate;

 protected:
  Expr MutateVariable(const Variable* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

class UseFinder : public IRVisitor {
 public:
  explicit UseFinder(const Variable* v) : v_(v) {}
  using IRVisitor::Visit;
  bool found = false;

 protected:
  void VisitVariable(const Variable* op) override { found |= op == v_; }
  void VisitFor(const For* op) override {
    found |= op->loop_var.node() == v_;
    IRVisitor::VisitFor(op);
  }

 private:
  const Variable* v_;
};

class LoadFinder : public IRVisitor {
 public:
  explicit LoadFinder(const BufferNode* buffer) : buffer_(buffer) {}
  using IRVisitor::Visit;
  bool found = false;

 protected:
  void VisitLoad(const Load* op) override {
    found |= buffer_ == nullptr || op->buffer.get() == buffer_;
    IRVisitor::VisitLoad(op);
  }

 private:
  const BufferNode* buffer_;
};

}  // namespace

Expr Substitute(const Expr& e, const VarMap& map) {
  return map.empty() ? e : Substituter(map).Mutate(e);
}
Stmt Substitute(const Stmt& s, const VarMap& map) {
  return map.empty() ? s : Substituter(map).Mutate(s);
}

bool UsesVar(const Expr& e, const Variable* v) {
  UseFinder f(v);
  f.Visit(e);
  return f.found;
}
bool UsesVar(const Stmt& s, const Variable* v) {
  UseFinder f(v);
  f.Visit(s);
  return f.found;
}

bool ReadsBuffer(const Expr& e, const BufferNode* buffer) {
  LoadFinder f(buffer);
  f.Visit(e);
  return f.found;
}

}  // namespace cinn_like::ir
