/// \file The inlined-size estimate the graph compiler keeps GPU inlining within (see the
/// header).
#include "hlir/inline_size.h"

#include <utility>

#include "ir/visitor.h"

namespace cinn_like::hlir {
namespace {

using Size = InlineSizes::Size;
using Inlined = std::map<const ir::BufferNode*, InlineSizes::Inlined>;

void AddScaled(Size& into, const Size& from, double factor) {
  into.nodes += factor * from.nodes;
  for (const auto& [v, n] : from.uses) into.uses[v] += factor * n;
}

/// Walks an element bottom-up, each node's size and variable uses summed into its parent's.
class SizeWalker : public ir::IRVisitor {
 public:
  explicit SizeWalker(const Inlined& inlined) : inlined_(inlined) {}
  using ir::IRVisitor::Visit;

  Size Measure(const ir::Expr& e) {
    Size saved = std::move(acc_);
    acc_ = Size{};
    Visit(e);
    Size mine = std::move(acc_);
    acc_ = std::move(saved);
    return mine;
  }

  void Visit(const ir::Expr& e) override {
    if (!e.defined()) return;
    acc_.nodes += 1;
    ir::IRVisitor::Visit(e);
  }

 protected:
  void VisitVariable(const ir::Variable* op) override { acc_.uses[op] += 1; }
  void VisitLoad(const ir::Load* op) override {
    auto it = inlined_.find(op->buffer.get());
    if (it == inlined_.end()) {
      ir::IRVisitor::VisitLoad(op);
      return;
    }
    // The producer's element, each of its axes replaced by the index read there.
    const InlineSizes::Inlined& p = it->second;
    acc_.nodes += p.nodes - 1;
    for (size_t d = 0; d < op->indices.size() && d < p.axis_uses.size(); ++d) {
      AddScaled(acc_, Measure(op->indices[d]), p.axis_uses[d]);
    }
  }

 private:
  const Inlined& inlined_;
  Size acc_;
};

}  // namespace

Size InlineSizes::Of(const ir::Stage& stage) const {
  return SizeWalker(inlined_).Measure(stage.body());
}

double InlineSizes::Estimate(const ir::Stage& stage) const { return Of(stage).nodes; }

void InlineSizes::Inline(const ir::Stage& stage) {
  Size s = Of(stage);
  Inlined in{s.nodes, {}};
  for (int d = 0; d < stage.rank(); ++d) {
    auto it = s.uses.find(stage.axes()[d].var.node());
    in.axis_uses.push_back(it == s.uses.end() ? 0.0 : it->second);
  }
  inlined_[stage.tensor()->buffer.get()] = std::move(in);
}

}  // namespace cinn_like::hlir
