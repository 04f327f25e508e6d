/// \file Externs updating their first input in place: the producer's stores redirected.
#include "ir/in_place_extern.h"

#include "ir/mutator.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

/// Every access to buffer `from` (loads, stores, its address passed to a call) made to `to`.
class RedirectBuffer : public IRMutator {
 public:
  RedirectBuffer(const BufferNode* from, Buffer to) : from_(from), to_(std::move(to)) {}
  using IRMutator::Mutate;

 protected:
  Expr MutateVariable(const Variable* op, const Expr& self) override {
    return op == from_->data.node() ? Expr(to_->data) : self;
  }
  Expr MutateLoad(const Load* op, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = MutateAll(op->indices, &idx);
    if (op->buffer.get() != from_ && !changed) return self;
    return Load::Make(op->buffer.get() == from_ ? to_ : op->buffer, idx);
  }
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    std::vector<Expr> idx;
    bool changed = MutateAll(op->indices, &idx);
    Expr v = Mutate(op->value);
    if (op->buffer.get() != from_ && !changed && v.same_as(op->value)) return self;
    return Store::Make(op->buffer.get() == from_ ? to_ : op->buffer, idx, v);
  }

 private:
  const BufferNode* from_;
  Buffer to_;
};

/// Whether `s` accesses `b`: loads, stores or its address (an extern call's argument).
bool Accesses(const Stmt& s, const BufferNode* b) {
  struct Finder : IRVisitor {
    const BufferNode* b;
    bool found = false;
    using IRVisitor::Visit;
    void VisitVariable(const Variable* op) override { found |= op == b->data.node(); }
    void VisitLoad(const Load* op) override {
      found |= op->buffer.get() == b;
      IRVisitor::VisitLoad(op);
    }
    void VisitStore(const Store* op) override {
      found |= op->buffer.get() == b;
      IRVisitor::VisitStore(op);
    }
  } f;
  f.b = b;
  f.Visit(s);
  return f.found;
}

}  // namespace

std::set<const BufferNode*> UpdateExternsInPlace(std::vector<TensorNest>* nests,
                                                 const std::set<const BufferNode*>& arg_buffers) {
  std::set<const BufferNode*> redirected;
  for (size_t e = 0; e < nests->size(); ++e) {
    const TensorNode* ext = (*nests)[e].tensor;
    if (!ext->extern_updates_first_input || ext->inputs.empty()) continue;
    const TensorNode* x = ext->inputs[0].get();
    const Buffer& from = x->buffer;
    if (arg_buffers.count(from.get()) || from->dtype != ext->dtype ||
        !StructuralEqual(from->shape, ext->shape)) {
      continue;
    }
    size_t producer = nests->size();
    for (size_t j = 0; j < e; ++j) {
      if ((*nests)[j].tensor == x) producer = j;
    }
    // The producer's nest stores x itself (not a buffer a folded consumer gave it).
    if (producer >= e || !Accesses((*nests)[producer].stmt, from.get())) continue;
    // Only x's nest and the extern's touch x's buffer (another library call passes its address).
    bool elsewhere = false;
    for (size_t j = 0; j < nests->size() && !elsewhere; ++j) {
      elsewhere = j != e && j != producer && Accesses((*nests)[j].stmt, from.get());
    }
    for (size_t i = 1; i < ext->inputs.size(); ++i) elsewhere |= ext->inputs[i].get() == x;
    if (elsewhere) continue;
    std::vector<Buffer> inputs;
    for (const auto& in : ext->inputs) inputs.push_back(in->buffer);
    inputs[0] = ext->buffer;
    (*nests)[e].stmt = ext->extern_body(inputs, ext->buffer);
    (*nests)[producer].stmt =
        RedirectBuffer(from.get(), ext->buffer).Mutate((*nests)[producer].stmt);
    redirected.insert(from.get());
  }
  return redirected;
}

}  // namespace cinn_like::ir
