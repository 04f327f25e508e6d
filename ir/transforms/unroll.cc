/// \file The unroll pass.
#include "ir/transforms/unroll.h"

#include <glog/logging.h>

#include "ir/mutator.h"
#include "ir/substitute.h"

namespace cinn_like::ir {
namespace {

constexpr int64_t kMaxUnroll = 512;

class Unroller : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (op->for_kind != ForKind::kUnrolled) {
      if (body.same_as(op->body)) return self;
      return For::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->bind_axis);
    }
    const int64_t* ext = AsConstInt(op->extent);
    if (!ext || *ext > kMaxUnroll) {
      LOG(WARNING) << "loop " << op->loop_var.name()
                   << " is marked unroll but its extent is not a constant up to " << kMaxUnroll
                   << "; it stays a serial loop";
      return For::Make(op->loop_var, op->min, op->extent, ForKind::kSerial, body);
    }
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < *ext; ++k) {
      Expr value = op->min + IndexConst(k);
      copies.push_back(Substitute(body, {{op->loop_var.node(), value}}));
    }
    return Block::Make(copies);
  }
};

}  // namespace

Stmt UnrollLoops(const Stmt& s) { return Unroller().Mutate(s); }

}  // namespace cinn_like::ir
