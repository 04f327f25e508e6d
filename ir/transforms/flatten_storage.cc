/// \file Storage flattening by Horner's rule over the buffer's shape.
#include "ir/transforms/flatten_storage.h"

#include <glog/logging.h>

#include "ir/mutator.h"

namespace cinn_like::ir {
namespace {

class Flattener : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Expr MutateLoad(const Load* op, const Expr& self) override {
    std::vector<Expr> idx;
    MutateAll(op->indices, &idx);
    if (op->indices.size() == 1 && idx[0].same_as(op->indices[0])) return self;
    return Load::Make(op->buffer, {Flat(op->buffer, idx)});
  }
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    std::vector<Expr> idx;
    bool changed = MutateAll(op->indices, &idx);
    Expr v = Mutate(op->value);
    if (op->indices.size() == 1 && !changed && v.same_as(op->value)) return self;
    return Store::Make(op->buffer, {Flat(op->buffer, idx)}, v);
  }

 private:
  static Expr Flat(const Buffer& b, const std::vector<Expr>& idx) {
    CHECK_EQ(idx.size(), b->shape.size())
        << "access to " << b->name << " of rank " << b->shape.size() << " with " << idx.size()
        << " indices";
    if (idx.empty()) return Expr(0);  // a rank-0 buffer's one element
    Expr flat = idx[0];
    for (size_t d = 1; d < idx.size(); ++d) flat = flat * b->shape[d] + idx[d];
    return flat;
  }
};

}  // namespace

Stmt FlattenStorage(const Stmt& s) { return Flattener().Mutate(s); }

}  // namespace cinn_like::ir
