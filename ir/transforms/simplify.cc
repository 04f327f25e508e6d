/// \file The simplifier: one mutator that rewrites bottom-up with interval facts.
#include "ir/transforms/simplify.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "ir/float16.h"
#include "ir/math.h"
#include "ir/mutator.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "ir/transforms/nest_uses.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min() / 4;
constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max() / 4;

/// A closed integer interval; the infinities are far from overflow.
struct Interval {
  int64_t lo = kNegInf, hi = kPosInf;
  bool known_lo() const { return lo > kNegInf; }
  bool known_hi() const { return hi < kPosInf; }
  bool non_negative() const { return lo >= 0; }
};

int64_t Clamp(int64_t v) { return std::clamp(v, kNegInf, kPosInf); }

/// Wraps a folded integer to the width of its type.
int64_t Wrap(Type t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits() >= 64) return v;
  if (t.is_uint()) return static_cast<int64_t>(static_cast<uint64_t>(v) & ((1ull << t.bits()) - 1));
  int shift = 64 - t.bits();
  return static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
}

const double* AsConstFloat(const Expr& e) {
  auto* f = e.As<FloatImm>();
  return f ? &f->value : nullptr;
}

bool IsZero(const Expr& e) {
  auto* i = AsConstInt(e);
  auto* f = AsConstFloat(e);
  return (i && *i == 0) || (f && *f == 0.0);
}

bool IsOne(const Expr& e) {
  auto* i = AsConstInt(e);
  auto* f = AsConstFloat(e);
  return (i && *i == 1) || (f && *f == 1.0);
}

Expr BoolConst(bool v) { return IntImm::Make(Bool(), v); }

/// x op y for int64 (C semantics: division truncates; the caller wraps to the type) or double
/// (IEEE); nullopt for other kinds, integer division by zero and float Mod (fmod is left to
/// the backends).
template <typename T>
std::optional<T> Fold(IrNodeKind k, T x, T y) {
  constexpr bool kInt = std::is_integral_v<T>;
  switch (k) {
    case IrNodeKind::kAdd:
      return x + y;
    case IrNodeKind::kSub:
      return x - y;
    case IrNodeKind::kMul:
      return x * y;
    case IrNodeKind::kDiv:
      if (kInt && y == 0) return std::nullopt;
      return x / y;
    case IrNodeKind::kMod:
      if constexpr (kInt) {
        if (y == 0) return std::nullopt;
        return x % y;
      }
      return std::nullopt;
    case IrNodeKind::kMin:
      return std::min(x, y);
    case IrNodeKind::kMax:
      return std::max(x, y);
    default:
      return std::nullopt;
  }
}

/// The values of integer type `t` as an interval (ends past 2^61 unknown: Bound's infinities).
Interval TypeRange(const Type& t) {
  const int bits = t.bits() - (t.is_uint() ? 0 : 1);
  if (bits > 61) return t.is_uint() ? Interval{0, kPosInf} : Interval{};
  return {t.is_uint() ? 0 : -(int64_t{1} << bits), (int64_t{1} << bits) - 1};
}

class Simplifier : public IRMutator {
 public:
  using IRMutator::Mutate;

  Interval Bound(const Expr& e) {
    if (!e.type().is_integer() || !e.type().is_scalar()) return {};
    if (auto* c = AsConstInt(e)) return {*c, *c};
    if (auto* v = e.As<Variable>()) {
      auto it = bounds_.find(v);
      if (it != bounds_.end()) return it->second;
      return {0, kPosInf};
    }
    if (auto* op = e.As<Add>()) {
      Interval a = Bound(op->a), b = Bound(op->b);
      return {a.known_lo() && b.known_lo() ? Clamp(a.lo + b.lo) : kNegInf,
              a.known_hi() && b.known_hi() ? Clamp(a.hi + b.hi) : kPosInf};
    }
    if (auto* op = e.As<Sub>()) {
      Interval a = Bound(op->a), b = Bound(op->b);
      return {a.known_lo() && b.known_hi() ? Clamp(a.lo - b.hi) : kNegInf,
              a.known_hi() && b.known_lo() ? Clamp(a.hi - b.lo) : kPosInf};
    }
    if (auto* op = e.As<Mul>()) {
      Interval a = Bound(op->a), b = Bound(op->b);
      if (a.non_negative() && b.non_negative()) {
        int64_t hi = a.known_hi() && b.known_hi() && a.hi < (1ll << 31) && b.hi < (1ll << 31)
                         ? a.hi * b.hi
                         : kPosInf;
        return {a.lo * b.lo < kPosInf ? Clamp(a.lo * b.lo) : kPosInf, hi};
      }
      return {};
    }
    if (auto* op = e.As<Div>()) {
      auto* c = AsConstInt(op->b);
      Interval a = Bound(op->a);
      if (c && *c > 0 && a.non_negative()) {
        return {a.lo / *c, a.known_hi() ? a.hi / *c : kPosInf};
      }
      return {};
    }
    if (auto* op = e.As<Mod>()) {
      auto* c = AsConstInt(op->b);
      Interval a = Bound(op->a);
      if (c && *c > 0 && a.non_negative()) return {0, std::min(*c - 1, a.hi)};
      return {};
    }
    if (auto* op = e.As<Min>()) {
      Interval a = Bound(op->a), b = Bound(op->b);
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
    if (auto* op = e.As<Max>()) {
      Interval a = Bound(op->a), b = Bound(op->b);
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    if (auto* op = e.As<Call>(); op && op->is_intrinsic(IntrinsicOp::kThreadIndex)) {
      // A thread's index along an axis: below the extent of the loop bound to that axis
      // around it (the stages computed per thread name their thread by it), else >= 0.
      auto* axis = op->args.size() == 1 ? AsConstInt(op->args[0]) : nullptr;
      if (axis && *axis >= 0 && *axis < 3 && thread_bounds_[*axis]) return *thread_bounds_[*axis];
      return {0, kPosInf};
    }
    if (auto* op = e.As<Select>()) {
      Interval a = Bound(op->true_value), b = Bound(op->false_value);
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    if (auto* op = e.As<Cast>()) {
      // An integer made another integer type keeps its value where every value it may take
      // fits the new type (an index widened to int64 stays non-negative). An interval past
      // the source type's ends may have wrapped around (Bound does not model wrapping): the
      // source type's whole range then.
      const Type& t = e.type();
      const Type& from = op->value.type();
      if (!from.is_integer()) return {};
      const Interval source = TypeRange(from);
      Interval a = Bound(op->value);
      if ((a.known_lo() && a.lo < source.lo) || (a.known_hi() && a.hi > source.hi)) a = source;
      const bool widens = t.bits() > from.bits() && (t.is_int() || from.is_uint());
      if (widens || (t.bits() == from.bits() && t.is_int() == from.is_int())) return a;
      const Interval target = TypeRange(t);
      if (a.lo >= target.lo && a.hi <= target.hi && a.known_lo() && a.known_hi()) return a;
      return {};
    }
    return {};
  }

 protected:
  Expr MutateAdd(const Add* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (auto r = FoldArith(op->kind, a, b)) return *r;
    if (IsZero(a)) return b;
    if (IsZero(b)) return a;
    if (AsConstInt(a) || AsConstFloat(a)) std::swap(a, b);
    // (x + c1) + c2 -> x + (c1 + c2)
    if (auto* inner = a.As<Add>(); inner && AsConstInt(inner->b) && AsConstInt(b)) {
      return Mutate(inner->a + Mutate(inner->b + b));
    }
    if (auto r = VectorArith(IrNodeKind::kAdd, a, b)) return *r;
    if (auto r = UndoDivMod(a, b)) return *r;
    return Rebuild<Add>(op, self, a, b);
  }

  Expr MutateSub(const Sub* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (auto r = FoldArith(op->kind, a, b)) return *r;
    if (IsZero(b)) return a;
    if (a.same_as(b) && a.type().is_integer()) return MakeConst(a.type(), 0);
    if (auto* inner = a.As<Add>(); inner && AsConstInt(inner->b) && AsConstInt(b)) {
      return Mutate(inner->a + Mutate(inner->b - b));
    }
    if (auto r = VectorArith(IrNodeKind::kSub, a, b)) return *r;
    return Rebuild<Sub>(op, self, a, b);
  }

  Expr MutateMul(const Mul* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (auto r = FoldArith(op->kind, a, b)) return *r;
    if (AsConstInt(a) || AsConstFloat(a)) std::swap(a, b);
    if (IsOne(b)) return a;
    if (IsZero(b) && a.type().is_integer()) return b;
    if (auto* inner = a.As<Mul>(); inner && AsConstInt(inner->b) && AsConstInt(b)) {
      return Mutate(inner->a * Mutate(inner->b * b));
    }
    if (auto r = VectorArith(IrNodeKind::kMul, a, b)) return *r;
    return Rebuild<Mul>(op, self, a, b);
  }

  Expr MutateDiv(const Div* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (auto r = FoldArith(op->kind, a, b)) return *r;
    if (IsOne(b)) return a;
    if (auto* ramp = LanesInOneBlock(a, b))
      return Broadcast::Make(Mutate(ramp->base / b.As<Broadcast>()->value), ramp->lanes);
    if (auto r = VectorArith(op->kind, a, b)) return *r;
    auto* c = AsConstInt(b);
    if (c && *c > 0 && a.type().is_integer()) {
      Interval ia = Bound(a);
      if (ia.non_negative() && ia.hi < *c) return MakeConst(a.type(), 0);
      // (x * k*c) / c -> x * k, and (x * k*c + y) / c -> x * k + y / c, for x, y >= 0.
      if (auto* m = a.As<Mul>();
          m && AsConstInt(m->b) && *AsConstInt(m->b) % *c == 0 && Bound(m->a).non_negative()) {
        return Mutate(m->a * MakeConst(a.type(), *AsConstInt(m->b) / *c));
      }
      if (auto* add = a.As<Add>()) {
        if (auto* m = add->a.As<Mul>(); m && AsConstInt(m->b) && *AsConstInt(m->b) % *c == 0 &&
                                        Bound(m->a).non_negative() &&
                                        Bound(add->b).non_negative()) {
          return Mutate(m->a * MakeConst(a.type(), *AsConstInt(m->b) / *c) + add->b / b);
        }
      }
    }
    return Rebuild<Div>(op, self, a, b);
  }

  Expr MutateMod(const Mod* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (auto r = FoldArith(op->kind, a, b)) return *r;
    if (auto* ramp = LanesInOneBlock(a, b)) {
      return Ramp::Make(Mutate(ramp->base % b.As<Broadcast>()->value), ramp->stride, ramp->lanes);
    }
    if (auto r = VectorArith(op->kind, a, b)) return *r;
    auto* c = AsConstInt(b);
    if (c && *c > 0 && a.type().is_integer()) {
      if (*c == 1) return MakeConst(a.type(), 0);
      Interval ia = Bound(a);
      if (ia.non_negative() && ia.hi < *c) return a;
      if (auto* m = a.As<Mul>();
          m && AsConstInt(m->b) && *AsConstInt(m->b) % *c == 0 && Bound(m->a).non_negative()) {
        return MakeConst(a.type(), 0);
      }
      if (auto* add = a.As<Add>()) {
        if (auto* m = add->a.As<Mul>(); m && AsConstInt(m->b) && *AsConstInt(m->b) % *c == 0 &&
                                        Bound(m->a).non_negative() &&
                                        Bound(add->b).non_negative()) {
          return Mutate(add->b % b);
        }
      }
    }
    return Rebuild<Mod>(op, self, a, b);
  }

  Expr MutateMin(const Min* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (auto r = FoldArith(op->kind, a, b)) return *r;
    Interval ia = Bound(a), ib = Bound(b);
    if (a.type().is_integer() && a.type().is_scalar()) {
      if (ia.hi <= ib.lo && ia.known_hi()) return a;
      if (ib.hi <= ia.lo && ib.known_hi()) return b;
    }
    return Rebuild<Min>(op, self, a, b);
  }

  Expr MutateMax(const Max* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (auto r = FoldArith(op->kind, a, b)) return *r;
    Interval ia = Bound(a), ib = Bound(b);
    if (a.type().is_integer() && a.type().is_scalar()) {
      if (ia.lo >= ib.hi && ib.known_hi()) return a;
      if (ib.lo >= ia.hi && ia.known_hi()) return b;
    }
    return Rebuild<Max>(op, self, a, b);
  }

#define CINN_LIKE_SIMPLIFY_COMPARE(name)                              \
  Expr Mutate##name(const name* op, const Expr& self) override {      \
    Expr a = Mutate(op->a), b = Mutate(op->b);                        \
    if (auto r = DecideCompare(op->kind, a, b)) return BoolConst(*r); \
    return Rebuild<name>(op, self, a, b);                             \
  }
  CINN_LIKE_SIMPLIFY_COMPARE(EQ)
  CINN_LIKE_SIMPLIFY_COMPARE(NE)
  CINN_LIKE_SIMPLIFY_COMPARE(LT)
  CINN_LIKE_SIMPLIFY_COMPARE(LE)
  CINN_LIKE_SIMPLIFY_COMPARE(GT)
  CINN_LIKE_SIMPLIFY_COMPARE(GE)
#undef CINN_LIKE_SIMPLIFY_COMPARE

  Expr MutateAnd(const And* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (a.type().is_scalar()) {
      if (auto* c = AsConstInt(a)) return *c ? b : a;
      if (auto* c = AsConstInt(b)) return *c ? a : b;
    }
    return Rebuild<And>(op, self, a, b);
  }

  Expr MutateOr(const Or* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (a.type().is_scalar()) {
      if (auto* c = AsConstInt(a)) return *c ? a : b;
      if (auto* c = AsConstInt(b)) return *c ? b : a;
    }
    return Rebuild<Or>(op, self, a, b);
  }

  Expr MutateNot(const Not* op, const Expr& self) override {
    Expr a = Mutate(op->a);
    if (auto* c = AsConstInt(a)) return BoolConst(!*c);
    return a.same_as(op->a) ? self : Not::Make(a);
  }

  Expr MutateSelect(const Select* op, const Expr& self) override {
    Expr c = Mutate(op->cond), t = Mutate(op->true_value), f = Mutate(op->false_value);
    if (auto* v = AsConstInt(c)) return *v ? t : f;
    if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    return Select::Make(c, t, f);
  }

  Expr MutateCast(const Cast* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    Type t = op->type;
    if (t.is_scalar()) {
      if (auto* i = AsConstInt(v)) {
        if (t.is_integer() || t.is_bool()) return IntImm::Make(t, Wrap(t, *i));
        if (t.is_float()) return FloatImm::Make(t, RoundToType(t, static_cast<double>(*i)));
      }
      if (auto* f = AsConstFloat(v); f && t.is_float())
        return FloatImm::Make(t, RoundToType(t, *f));
      // An integer made a float exactly and back truncates to itself: int(float(i)) is i cast
      // (an index compared as a float, as tril's mask of an arange does, stays an integer).
      if (auto* inner = v.As<Cast>(); inner && t.is_integer() && v.type().is_float() &&
                                      inner->value.type().is_integer() &&
                                      ExactInFloat(inner->value, v.type())) {
        return Mutate(Cast::Make(t, inner->value));
      }
    }
    return v.same_as(op->value) ? self : Cast::Make(t, v);
  }

  /// pow(x, 2) and pow(x, 3) of float32 and float64 as products (x of at most
  /// kMaxPowerBaseNodes nodes), as PyTorch's own kernels
  /// compute them: a general pow costs about a hundred GPU instructions even where its
  /// exponent is a constant (GELU's tanh form cubes its input). 16-bit floats keep the call,
  /// which rounds once where products would round after each.
  Expr MutateCall(const Call* op, const Expr& self) override {
    Expr e = IRMutator::MutateCall(op, self);
    auto* call = e.As<Call>();
    if (!call || call->call_kind != Call::CallKind::kPure || call->args.size() != 2 ||
        call->name != GetMathOpInfo(MathOp::kPow).name || !call->type.is_float() ||
        call->type.bits() < 32) {
      return e;
    }
    Expr exponent = call->args[1];
    if (auto* b = exponent.As<Broadcast>()) exponent = b->value;
    const double* c = AsConstFloat(exponent);
    const Expr& x = call->args[0];
    // Only of small bases: a product repeats its base, and nested powers would double it at
    // each level.
    if (!c || NodeCount(x, kMaxPowerBaseNodes + 1) > kMaxPowerBaseNodes) return e;
    if (*c == 2.0) return x * x;
    if (*c == 3.0) return x * x * x;
    return e;
  }

  static constexpr int kMaxPowerBaseNodes = 8;
  /// The nodes of `e`, counted up to `limit`; a load, ramp or broadcast is one (its index is
  /// not repeated with it: the C printers read a load once).
  static int NodeCount(const Expr& e, int limit) {
    struct Count : IRVisitor {
      using IRVisitor::Visit;
      int n = 0, limit = 0;
      void Visit(const Expr& x) override {
        if (!x.defined() || n >= limit) return;
        ++n;
        if (x.As<Load>() || x.As<Ramp>() || x.As<Broadcast>()) return;
        IRVisitor::Visit(x);
      }
    } count;
    count.limit = limit;
    count.Visit(e);
    return count.n;
  }

  Stmt MutateFor(const For* op, const Stmt& self) override {
    Expr mn = Mutate(op->min), ext = Mutate(op->extent);
    if (IsConstInt(ext, 0)) return Block::Make({});
    bool bound = op->for_kind == ForKind::kGpuBlock || op->for_kind == ForKind::kGpuThread;
    if (IsConstInt(ext, 1) && !bound) {
      return Mutate(Substitute(op->body, {{op->loop_var.node(), mn}}));
    }
    Interval range;
    Interval imn = Bound(mn), iext = Bound(ext);
    range.lo = imn.lo;
    range.hi = imn.known_hi() && iext.known_hi() ? imn.hi + iext.hi - 1 : kPosInf;
    auto saved = bounds_.find(op->loop_var.node());
    bounds_[op->loop_var.node()] = range;
    const bool thread =
        op->for_kind == ForKind::kGpuThread && op->bind_axis >= 0 && op->bind_axis < 3;
    // A top-level loop nest (what SplitHostDevice makes a kernel of, or part of one whose
    // other nests have the same launch: merge_nests.h): its threads are below the launch's
    // extents, the widest loop bound to each axis in it (NestUses, as the launch is sized),
    // also where a stage computed per thread names its thread outside the loops bound to it.
    // Statement simplification runs on whole function bodies (ir/lower.cc).
    const bool kernel = !in_kernel_;
    const std::array<std::optional<Interval>, 3> outer_threads = thread_bounds_;
    if (kernel) {
      NestUses launch;
      launch.Visit(self);
      for (int a = 0; a < 3; ++a) {
        const int64_t* extent = launch.block[a].defined() ? AsConstInt(launch.block[a]) : nullptr;
        if (extent && *extent > 0) thread_bounds_[a] = Interval{0, *extent - 1};
      }
      in_kernel_ = true;
    }
    if (thread) {
      thread_bounds_[op->bind_axis] = Interval{0, iext.known_hi() ? iext.hi - 1 : kPosInf};
    }
    Stmt body = Mutate(op->body);
    thread_bounds_ = outer_threads;
    if (kernel) in_kernel_ = false;
    bounds_.erase(op->loop_var.node());
    (void)saved;
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
    return For::Make(op->loop_var, mn, ext, op->for_kind, body, op->bind_axis);
  }

  Stmt MutateLetStmt(const LetStmt* op, const Stmt& self) override {
    Expr v = Mutate(op->value);
    bounds_[op->var.node()] = Bound(v);  // not the default: a let may be negative
    Stmt body = Mutate(op->body);
    bounds_.erase(op->var.node());
    if (v.same_as(op->value) && body.same_as(op->body)) return self;
    return LetStmt::Make(op->var, v, body);
  }

  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    Expr c = Mutate(op->cond);
    if (auto* v = AsConstInt(c)) {
      if (*v) return Mutate(op->then_case);
      return op->else_case.defined() ? Mutate(op->else_case) : Block::Make({});
    }
    Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
    if (c.same_as(op->cond) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return IfThenElse::Make(c, t, e);
  }

 private:
  template <typename T>
  Expr Rebuild(const T* op, const Expr& self, const Expr& a, const Expr& b) {
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return T::Make(a, b);
  }

  /// Folds two scalar constants of the same type.
  std::optional<Expr> FoldArith(IrNodeKind k, const Expr& a, const Expr& b) {
    if (!a.type().is_scalar()) return std::nullopt;
    Type t = a.type();
    auto *ia = AsConstInt(a), *ib = AsConstInt(b);
    if (ia && ib) {
      std::optional<int64_t> r = Fold(k, *ia, *ib);
      if (r) return IntImm::Make(t, Wrap(t, *r));
    }
    auto *fa = AsConstFloat(a), *fb = AsConstFloat(b);
    if (fa && fb) {
      // Folding in double then rounding once equals the backends' float32 (or float16 and
      // bfloat16 computed in float32 and rounded back) result: double keeps more than twice
      // the mantissa bits plus two, so + - * / round exactly as the narrow type would.
      std::optional<double> r = Fold(k, *fa, *fb);
      if (r) return FloatImm::Make(t, RoundToType(t, *r));
    }
    return std::nullopt;
  }

  /// `a` when it is a dense integer ramp whose lanes all fall in one block of `b` (a broadcast
  /// constant c > 0): base >= 0 a known multiple of the lanes L, and L divides c. Then
  /// a / b is one value per lane (broadcast(base / c)) and a % b a dense ramp from base % c:
  /// a fused vector index split back into dims stays a vector access.
  const Ramp* LanesInOneBlock(const Expr& a, const Expr& b) {
    auto* ramp = a.As<Ramp>();
    auto* bc = b.As<Broadcast>();
    if (!ramp || !bc || !a.type().is_integer() || !IsOne(ramp->stride)) return nullptr;
    auto* c = AsConstInt(bc->value);
    if (!c || *c <= 0 || *c % ramp->lanes != 0) return nullptr;
    if (KnownDivisor(ramp->base) % ramp->lanes != 0 || !Bound(ramp->base).non_negative()) {
      return nullptr;
    }
    return ramp;
  }

  /// x / c * c + x % c -> x, for integers x and a constant c > 0 (a fused index split into
  /// dims, flattened again); of vectors too, with c broadcast (a vectorized fused index whose
  /// innermost dim the vectors do not tile).
  std::optional<Expr> UndoDivMod(const Expr& a, const Expr& b) {
    if (!a.type().is_integer()) return std::nullopt;
    auto constant = [](const Expr& e) {
      auto* bc = e.As<Broadcast>();
      return AsConstInt(bc ? bc->value : e);
    };
    for (int order = 0; order < 2; ++order) {
      const Expr& p = order == 0 ? a : b;
      const Expr& q = order == 0 ? b : a;
      auto* mul = p.As<Mul>();
      auto* mod = q.As<Mod>();
      if (!mul || !mod) continue;
      auto* div = mul->a.As<Div>();
      auto* c = constant(mul->b);
      if (!div || !c || *c <= 0) continue;
      auto* dc = constant(div->b);
      auto* mc = constant(mod->b);
      if (dc && mc && *dc == *c && *mc == *c && StructuralEqual(div->a, mod->a)) return div->a;
    }
    return std::nullopt;
  }

  /// Ramp/broadcast algebra: keeps vector index arithmetic in ramp form so that codegen
  /// sees dense vector accesses.
  std::optional<Expr> VectorArith(IrNodeKind k, const Expr& a, const Expr& b) {
    if (!a.type().is_vector()) return std::nullopt;
    auto *ra = a.As<Ramp>(), *rb = b.As<Ramp>();
    auto *ba = a.As<Broadcast>(), *bb = b.As<Broadcast>();
    int lanes = a.type().lanes();
    switch (k) {
      case IrNodeKind::kAdd:
        if (ba && bb) return Broadcast::Make(Mutate(ba->value + bb->value), lanes);
        if (ra && bb) return Ramp::Make(Mutate(ra->base + bb->value), ra->stride, lanes);
        if (ba && rb) return Ramp::Make(Mutate(ba->value + rb->base), rb->stride, lanes);
        if (ra && rb) {
          return Ramp::Make(Mutate(ra->base + rb->base), Mutate(ra->stride + rb->stride), lanes);
        }
        break;
      case IrNodeKind::kSub:
        if (ba && bb) return Broadcast::Make(Mutate(ba->value - bb->value), lanes);
        if (ra && bb) return Ramp::Make(Mutate(ra->base - bb->value), ra->stride, lanes);
        break;
      case IrNodeKind::kMul:
        if (ba && bb) return Broadcast::Make(Mutate(ba->value * bb->value), lanes);
        if (ra && bb) {
          return Ramp::Make(Mutate(ra->base * bb->value), Mutate(ra->stride * bb->value), lanes);
        }
        if (ba && rb) {
          return Ramp::Make(Mutate(rb->base * ba->value), Mutate(rb->stride * ba->value), lanes);
        }
        break;
      case IrNodeKind::kDiv:
        if (ba && bb) return Broadcast::Make(Mutate(ba->value / bb->value), lanes);
        break;
      case IrNodeKind::kMod:
        if (ba && bb) return Broadcast::Make(Mutate(ba->value % bb->value), lanes);
        break;
      default:
        break;
    }
    return std::nullopt;
  }

  /// The values integer expression `i` takes, as doubles: its bounds where they are known and
  /// within its type (an interval past the type's ends may have wrapped around), else the
  /// type's whole range; a variable counts only with a bound this pass has (Bound's default of
  /// a non-negative index is not used here).
  std::pair<double, double> IntegerRange(const Expr& i) {
    const Type& t = i.type();
    const int bits = t.bits() - (t.is_uint() ? 0 : 1);
    const double type_lo = t.is_uint() ? 0 : -std::ldexp(1.0, bits);
    const double type_hi = std::ldexp(1.0, bits) - 1;
    auto* v = i.As<Variable>();
    if (v && bounds_.find(v) == bounds_.end()) return {type_lo, type_hi};
    const Interval r = Bound(i);
    if (!r.known_lo() || !r.known_hi()) return {type_lo, type_hi};
    const double lo = static_cast<double>(r.lo), hi = static_cast<double>(r.hi);
    if (lo < type_lo || hi > type_hi) return {type_lo, type_hi};
    return {lo, hi};
  }

  /// Whether every value integer `i` takes converts to float type `f` exactly.
  bool ExactInFloat(const Expr& i, const Type& f) {
    const int mantissa = f.bits() == 64 ? 53 : f.bits() == 32 ? 24 : f.is_bfloat16() ? 8 : 11;
    const double limit = std::ldexp(1.0, mantissa);
    const auto [lo, hi] = IntegerRange(i);
    return std::abs(lo) <= limit && std::abs(hi) <= limit;
  }

  /// The values a scalar float expression takes, where known: constants, integers made floats
  /// (IntegerRange, widened where the float rounds; none where float16 may overflow to
  /// infinity) and abs of those.
  std::optional<std::pair<double, double>> FloatRange(const Expr& e) {
    if (!e.type().is_float() || !e.type().is_scalar()) return std::nullopt;
    if (auto* f = AsConstFloat(e)) return std::make_pair(*f, *f);
    if (auto* c = e.As<Cast>(); c && c->value.type().is_integer()) {
      const auto [lo, hi] = IntegerRange(c->value);
      const double magnitude = std::max(std::abs(lo), std::abs(hi));
      // float16's largest finite value is 65504; from 65520 on a value rounds to infinity.
      if (e.type().bits() == 16 && !e.type().is_bfloat16() && magnitude >= 65520) {
        return std::nullopt;
      }
      // Rounding to the float moves a value by at most half a unit in its last place.
      const double slack = ExactInFloat(c->value, e.type()) ? 0 : magnitude / 128;
      return std::make_pair(lo - slack, hi + slack);
    }
    if (auto* call = e.As<Call>();
        call && call->name == GetMathOpInfo(MathOp::kAbs).name && call->args.size() == 1) {
      if (auto r = FloatRange(call->args[0])) {
        const double m = std::max(std::abs(r->first), std::abs(r->second));
        const double lo = r->first > 0 ? r->first : r->second < 0 ? -r->second : 0;
        return std::make_pair(lo, m);
      }
    }
    return std::nullopt;
  }

  std::optional<bool> DecideCompare(IrNodeKind k, const Expr& a, const Expr& b) {
    if (!a.type().is_scalar()) return std::nullopt;
    if (a.type().is_float()) {
      auto ra = FloatRange(a), rb = FloatRange(b);
      if (ra && rb) {
        switch (k) {
          case IrNodeKind::kLT:
            if (ra->second < rb->first) return true;
            if (ra->first >= rb->second) return false;
            break;
          case IrNodeKind::kLE:
            if (ra->second <= rb->first) return true;
            if (ra->first > rb->second) return false;
            break;
          case IrNodeKind::kGT:
            if (ra->first > rb->second) return true;
            if (ra->second <= rb->first) return false;
            break;
          case IrNodeKind::kGE:
            if (ra->first >= rb->second) return true;
            if (ra->second < rb->first) return false;
            break;
          default:
            break;
        }
      }
    }
    if (auto* fa = AsConstFloat(a), *fb = AsConstFloat(b); fa && fb) {
      switch (k) {
        case IrNodeKind::kEQ:
          return *fa == *fb;
        case IrNodeKind::kNE:
          return *fa != *fb;
        case IrNodeKind::kLT:
          return *fa < *fb;
        case IrNodeKind::kLE:
          return *fa <= *fb;
        case IrNodeKind::kGT:
          return *fa > *fb;
        case IrNodeKind::kGE:
          return *fa >= *fb;
        default:
          return std::nullopt;
      }
    }
    if (!a.type().is_integer()) return std::nullopt;
    // Decide on the interval of a - b, which also catches (x + c) < x forms.
    Interval d = Bound(a - b);
    Interval ia = Bound(a), ib = Bound(b);
    if (ia.known_hi() && ib.known_lo()) d.hi = std::min(d.hi, ia.hi - ib.lo);
    if (ia.known_lo() && ib.known_hi()) d.lo = std::max(d.lo, ia.lo - ib.hi);
    if (a.same_as(b)) d = {0, 0};
    switch (k) {
      case IrNodeKind::kLT:
        if (d.hi < 0) return true;
        if (d.lo >= 0) return false;
        break;
      case IrNodeKind::kLE:
        if (d.hi <= 0) return true;
        if (d.lo > 0) return false;
        break;
      case IrNodeKind::kGT:
        if (d.lo > 0) return true;
        if (d.hi <= 0) return false;
        break;
      case IrNodeKind::kGE:
        if (d.lo >= 0) return true;
        if (d.hi < 0) return false;
        break;
      case IrNodeKind::kEQ:
        if (d.lo == 0 && d.hi == 0) return true;
        if (d.lo > 0 || d.hi < 0) return false;
        break;
      case IrNodeKind::kNE:
        if (d.lo == 0 && d.hi == 0) return false;
        if (d.lo > 0 || d.hi < 0) return true;
        break;
      default:
        break;
    }
    return std::nullopt;
  }

  std::unordered_map<const Variable*, Interval> bounds_;
  // The thread indices' bounds along x, y, z inside loops bound to them (Bound of thread_index).
  std::array<std::optional<Interval>, 3> thread_bounds_;
  bool in_kernel_ = false;
};

}  // namespace

int64_t KnownDivisor(const Expr& e, const std::map<const Variable*, int64_t>* lets) {
  constexpr int64_t kCap = int64_t{1} << 30;
  // A divisor past the cap keeps its largest power of two within it (which still divides it).
  auto capped = [](int64_t d) { return d <= kCap ? d : std::gcd(d, kCap); };
  auto known = [&](const Expr& x) { return KnownDivisor(x, lets); };
  if (auto* c = AsConstInt(e)) {
    if (*c == 0) return kCap;
    // The magnitude without overflow (the most negative value is a power of two).
    return *c == std::numeric_limits<int64_t>::min() ? kCap : capped(*c < 0 ? -*c : *c);
  }
  if (auto* m = e.As<Mul>()) return capped(known(m->a) * known(m->b));  // at most 2^60
  if (auto* a = e.As<Add>()) return std::gcd(known(a->a), known(a->b));
  if (auto* d = e.As<Sub>()) return std::gcd(known(d->a), known(d->b));
  // a - b * q for an integer q, whichever way the quotient rounds.
  if (auto* m = e.As<Mod>()) return std::gcd(known(m->a), known(m->b));
  // A widening integer cast keeps the value (a narrowing one wraps and keeps only powers of two).
  if (auto* c = e.As<Cast>()) {
    const bool widening = e.type().is_integer() && c->value.type().is_integer() &&
                          e.type().bits() >= c->value.type().bits();
    return widening ? known(c->value) : 1;
  }
  if (auto* v = e.As<Variable>(); v && lets) {
    auto it = lets->find(v);
    if (it != lets->end()) return it->second;
  }
  return 1;
}

Expr Simplify(const Expr& e) { return Simplifier().Mutate(e); }
Stmt Simplify(const Stmt& s) { return Simplifier().Mutate(s); }

}  // namespace cinn_like::ir
