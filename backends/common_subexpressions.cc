#include "backends/common_subexpressions.h"

#include <unordered_map>

#include "ir/mutator.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

namespace cinn_like::backends {
namespace {

/// What a subexpression holds, as far as binding it goes.
struct Contents {
  bool math_call = false;    // a kPure call: worth computing once
  bool intrinsic = false;    // never bound
  bool needs_guard = false;  // a load or an integer division: bound only if unconditional
};

Contents ContentsOf(const ir::Expr& e) {
  struct Scan : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    Contents c;
    void VisitCall(const ir::Call* op) override {
      (op->call_kind == ir::Call::CallKind::kPure ? c.math_call : c.intrinsic) = true;
      ir::IRVisitor::VisitCall(op);
    }
    void VisitLoad(const ir::Load* op) override {
      c.needs_guard = true;
      ir::IRVisitor::VisitLoad(op);
    }
    void VisitDiv(const ir::Div* op) override {
      c.needs_guard |= op->type.is_integer();
      ir::IRVisitor::VisitDiv(op);
    }
    void VisitMod(const ir::Mod* op) override {
      c.needs_guard |= op->type.is_integer();
      ir::IRVisitor::VisitMod(op);
    }
  } scan;
  scan.Visit(e);
  return scan.c;
}

/// Each distinct scalar subexpression of an expression, children before parents, with how
/// often it occurs and whether once where the statement always evaluates it.
class Census : public ir::IRVisitor {
 public:
  struct Entry {
    ir::Expr expr;
    int uses = 0;
    bool unconditional = false;
  };
  std::vector<Entry> entries;

  void Visit(const ir::Expr& e) override {
    if (!e.defined()) return;
    ir::IRVisitor::Visit(e);  // the children first
    if (!e.type().is_scalar() || e.As<ir::Variable>() || e.As<ir::IntImm>() ||
        e.As<ir::FloatImm>() || e.As<ir::StringImm>()) {
      return;
    }
    Entry& entry = Find(e);
    ++entry.uses;
    entry.unconditional |= conditional_ == 0;
  }

 protected:
  using ir::IRVisitor::Visit;
  void VisitSelect(const ir::Select* op) override {
    Visit(op->cond);
    ++conditional_;
    Visit(op->true_value);
    Visit(op->false_value);
    --conditional_;
  }
  void VisitAnd(const ir::And* op) override { ShortCircuit(op->a, op->b); }
  void VisitOr(const ir::Or* op) override { ShortCircuit(op->a, op->b); }
  void VisitCall(const ir::Call* op) override {
    const bool intrinsic = op->call_kind == ir::Call::CallKind::kIntrinsic;
    conditional_ += intrinsic;
    ir::IRVisitor::VisitCall(op);
    conditional_ -= intrinsic;
  }

 private:
  void ShortCircuit(const ir::Expr& first, const ir::Expr& second) {
    Visit(first);
    ++conditional_;
    Visit(second);
    --conditional_;
  }
  Entry& Find(const ir::Expr& e) {
    const size_t h = ir::StructuralHash(e);
    auto [lo, hi] = by_hash_.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      if (ir::StructuralEqual(entries[it->second].expr, e)) return entries[it->second];
    }
    by_hash_.emplace(h, entries.size());
    entries.push_back({e});
    return entries.back();
  }
  std::unordered_multimap<size_t, size_t> by_hash_;
  int conditional_ = 0;
};

/// Replaces every subexpression equal to a bound one by its variable.
class Rebind : public ir::IRMutator {
 public:
  void Bind(const ir::Expr& e, const ir::Var& v) {
    bound_.emplace(ir::StructuralHash(e), std::make_pair(e, v));
  }
  ir::Expr Mutate(const ir::Expr& e) override {
    if (e.defined() && e.type().is_scalar()) {
      auto [lo, hi] = bound_.equal_range(ir::StructuralHash(e));
      for (auto it = lo; it != hi; ++it) {
        if (ir::StructuralEqual(it->second.first, e)) return it->second.second;
      }
    }
    return ir::IRMutator::Mutate(e);
  }
  /// `e` with its children rebound (not `e` itself): the value of e's own temporary.
  ir::Expr MutateChildren(const ir::Expr& e) { return ir::IRMutator::Mutate(e); }
  using ir::IRMutator::Mutate;

 private:
  std::unordered_multimap<size_t, std::pair<ir::Expr, ir::Var>> bound_;
};

}  // namespace

CommonSubexpressions ExtractCommonSubexpressions(const ir::Expr& e,
                                                 const std::function<std::string()>& name) {
  CommonSubexpressions out;
  out.value = e;
  // Every binding calls a math function: most stores call none and skip the census.
  if (!e.defined() || !ContentsOf(e).math_call) return out;
  Census census;
  census.Visit(e);
  Rebind rebind;
  for (const Census::Entry& entry : census.entries) {
    if (entry.uses < 2) continue;
    const Contents c = ContentsOf(entry.expr);
    if (!c.math_call || c.intrinsic || (c.needs_guard && !entry.unconditional)) continue;
    ir::Var v(name(), entry.expr.type());
    out.defs.emplace_back(v, rebind.MutateChildren(entry.expr));
    rebind.Bind(entry.expr, v);
  }
  out.value = out.defs.empty() ? e : rebind.Mutate(e);
  return out;
}

}  // namespace cinn_like::backends
