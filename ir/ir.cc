/// \file Node constructors with their type rules, and the expression-building operators.
#include "ir/ir.h"

#include <glog/logging.h>

#include <cmath>

#include "ir/float16.h"

namespace cinn_like::ir {

const char* KindName(IrNodeKind kind) {
  switch (kind) {
#define CINN_LIKE_KIND_NAME(name) \
  case IrNodeKind::k##name:       \
    return #name;
    CINN_LIKE_ALL_NODES(CINN_LIKE_KIND_NAME)
#undef CINN_LIKE_KIND_NAME
  }
  return "?";
}

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorize";
    case ForKind::kUnrolled:
      return "unroll";
    case ForKind::kUnrollHint:
      return "unroll_hint";
    case ForKind::kGpuBlock:
      return "blockIdx";
    case ForKind::kGpuThread:
      return "threadIdx";
  }
  return "?";
}

Expr::Expr(int value) : Expr(IntImm::Make(Int(32), value)) {}
Expr::Expr(int64_t value) : Expr(IntImm::Make(Int(64), value)) {}
Expr::Expr(float value) : Expr(FloatImm::Make(Float(32), value)) {}
Expr::Expr(double value) : Expr(FloatImm::Make(Float(64), value)) {}

Expr IndexConst(int64_t value) { return IntImm::Make(IndexType(), value); }

Expr IntImm::Make(Type t, int64_t v) {
  CHECK(t.is_integer() || t.is_bool()) << "IntImm of type " << t.ToString();
  CHECK(t.is_scalar());
  return Expr(std::make_shared<IntImm>(t, v));
}

Expr FloatImm::Make(Type t, double v) {
  CHECK(t.is_float() && t.is_scalar()) << "FloatImm of type " << t.ToString();
  // A 16-bit constant holds a value of its type, so that folding in double and printing
  // agree with the device; float32 constants are rounded where they are folded or emitted.
  if (t.is_low_precision_float()) v = RoundToType(t, v);
  return Expr(std::make_shared<FloatImm>(t, v));
}

Expr StringImm::Make(std::string v) { return Expr(std::make_shared<StringImm>(std::move(v))); }

Var::Var(std::string name, Type type) : Expr(std::make_shared<Variable>(type, std::move(name))) {}

Var::Var(const Expr& e) : Expr(e) { CHECK(e.As<Variable>()) << "Var from a non-variable"; }

namespace {

bool IsComparisonOrLogic(IrNodeKind k) {
  switch (k) {
    case IrNodeKind::kEQ:
    case IrNodeKind::kNE:
    case IrNodeKind::kLT:
    case IrNodeKind::kLE:
    case IrNodeKind::kGT:
    case IrNodeKind::kGE:
    case IrNodeKind::kAnd:
    case IrNodeKind::kOr:
      return true;
    default:
      return false;
  }
}

/// Signed integers of 32 and 64 bits with the same lanes meet in the wider type: index
/// arithmetic lowered with 64-bit indices (IndexTypeScope) mixes its int64 loop variables and
/// shape constants with the int32 constants and values ops write (`i * 2 + 1`, an int32 index
/// read from a tensor). Every other mismatch stays an error.
void WidenIndexOperands(Expr& a, Expr& b) {
  if (!a.defined() || !b.defined()) return;
  Type ta = a.type(), tb = b.type();
  if (ta == tb || !ta.is_int() || !tb.is_int() || ta.lanes() != tb.lanes()) return;
  auto index_bits = [](int bits) { return bits == 32 || bits == 64; };
  if (!index_bits(ta.bits()) || !index_bits(tb.bits())) return;
  if (ta.bits() < tb.bits()) {
    a = Cast::Make(tb, a);
  } else {
    b = Cast::Make(ta, b);
  }
}

template <typename T>
Expr MakeBinary(Expr a, Expr b) {
  CHECK(a.defined() && b.defined()) << KindName(T::kKind) << " of an undefined operand";
  WidenIndexOperands(a, b);
  CHECK(a.type() == b.type()) << KindName(T::kKind) << " of mismatched types "
                              << a.type().ToString() << " and " << b.type().ToString();
  Type t = IsComparisonOrLogic(T::kKind) ? Bool(a.type().lanes()) : a.type();
  if (T::kKind == IrNodeKind::kAnd || T::kKind == IrNodeKind::kOr) {
    CHECK(a.type().is_bool()) << KindName(T::kKind) << " of non-bool " << a.type().ToString();
  }
  return Expr(std::make_shared<T>(t, std::move(a), std::move(b)));
}

}  // namespace

#define CINN_LIKE_DEFINE_BINARY_MAKE(name, sym) \
  Expr name::Make(Expr a, Expr b) { return MakeBinary<name>(std::move(a), std::move(b)); }
CINN_LIKE_BINARY_NODES(CINN_LIKE_DEFINE_BINARY_MAKE)
#undef CINN_LIKE_DEFINE_BINARY_MAKE

Expr Not::Make(Expr a) {
  CHECK(a.type().is_bool()) << "Not of non-bool " << a.type().ToString();
  Type t = a.type();
  return Expr(std::make_shared<Not>(t, std::move(a)));
}

Expr Select::Make(Expr cond, Expr t, Expr f) {
  CHECK(cond.type().is_bool()) << "Select condition of type " << cond.type().ToString();
  WidenIndexOperands(t, f);
  CHECK(t.type() == f.type()) << "Select branches of types " << t.type().ToString() << " and "
                              << f.type().ToString();
  Type type = t.type();
  return Expr(std::make_shared<Select>(type, std::move(cond), std::move(t), std::move(f)));
}

Expr Cast::Make(Type t, Expr v) {
  CHECK(t.lanes() == v.type().lanes()) << "Cast changes lanes";
  if (v.type() == t) return v;
  return Expr(std::make_shared<Cast>(t, std::move(v)));
}

Buffer MakeBuffer(std::string name, Type dtype, std::vector<Expr> shape, MemoryScope scope) {
  auto b = std::make_shared<BufferNode>();
  b->name = std::move(name);
  b->dtype = dtype;
  b->shape = std::move(shape);
  b->scope = scope;
  b->data = Var(b->name, Handle());
  return b;
}

Expr Load::Make(Buffer buffer, std::vector<Expr> indices) {
  CHECK(buffer) << "Load from a null buffer";
  // No index: the one element of a rank-0 buffer (a reduction over every axis, say).
  int lanes = indices.empty() ? 1 : indices[0].type().lanes();
  for (auto& i : indices) CHECK(i.type().is_integer()) << "non-integer index into " << buffer->name;
  Type t = buffer->dtype.WithLanes(lanes);
  return Expr(std::make_shared<Load>(t, std::move(buffer), std::move(indices)));
}

Expr Ramp::Make(Expr base, Expr stride, int lanes) {
  WidenIndexOperands(base, stride);
  CHECK(base.type().is_scalar() && base.type() == stride.type()) << "Ramp operand types";
  CHECK_GT(lanes, 1);
  Type t = base.type().WithLanes(lanes);
  return Expr(std::make_shared<Ramp>(t, std::move(base), std::move(stride), lanes));
}

Expr Broadcast::Make(Expr value, int lanes) {
  CHECK(value.type().is_scalar()) << "Broadcast of a vector";
  CHECK_GT(lanes, 1);
  Type t = value.type().WithLanes(lanes);
  return Expr(std::make_shared<Broadcast>(t, std::move(value), lanes));
}

Expr Call::Make(Type t, std::string name, std::vector<Expr> args) {
  return Expr(std::make_shared<Call>(t, std::move(name), std::move(args), std::nullopt));
}

Expr Call::Make(Type t, IntrinsicOp op, std::vector<Expr> args) {
  return Expr(std::make_shared<Call>(t, IntrinsicName(op), std::move(args), op));
}

Expr Call::WithArgs(Type t, std::vector<Expr> new_args) const {
  return Expr(std::make_shared<Call>(t, name, std::move(new_args), intrinsic));
}

Stmt Store::Make(Buffer buffer, std::vector<Expr> indices, Expr value) {
  CHECK(buffer) << "Store to a null buffer";
  CHECK(value.type().ElementOf() == buffer->dtype)
      << "Store of " << value.type().ToString() << " into " << buffer->name << " of "
      << buffer->dtype.ToString();
  return Stmt(std::make_shared<Store>(std::move(buffer), std::move(indices), std::move(value)));
}

Stmt For::Make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body, int bind_axis) {
  CHECK(body.defined()) << "For " << loop_var.name() << " without a body";
  bool bound = kind == ForKind::kGpuBlock || kind == ForKind::kGpuThread;
  CHECK(bound == (bind_axis >= 0 && bind_axis < 3)) << "For bind axis " << bind_axis;
  return Stmt(std::make_shared<For>(std::move(loop_var), std::move(min), std::move(extent), kind,
                                    bind_axis, std::move(body)));
}

Stmt IfThenElse::Make(Expr cond, Stmt then_case, Stmt else_case) {
  CHECK(cond.type() == Bool()) << "if condition of type " << cond.type().ToString();
  return Stmt(
      std::make_shared<IfThenElse>(std::move(cond), std::move(then_case), std::move(else_case)));
}

Stmt Block::Make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s.defined()) continue;
    if (auto* b = s.As<Block>()) {
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<Block>(std::move(flat)));
}

Stmt Evaluate::Make(Expr value) { return Stmt(std::make_shared<Evaluate>(std::move(value))); }

Stmt LetStmt::Make(Var var, Expr value, Stmt body) {
  CHECK(var.type() == value.type()) << "let " << var.name() << " of " << var.type().ToString()
                                    << " bound to a " << value.type().ToString();
  return Stmt(std::make_shared<LetStmt>(std::move(var), std::move(value), std::move(body)));
}

Stmt Allocate::Make(Buffer buffer, Stmt body) {
  return Stmt(std::make_shared<Allocate>(std::move(buffer), std::move(body)));
}

// ---------------------------------------------------------------------------------------------

int64_t WrapToInt64(double v) {
  if (!std::isfinite(v)) return 0;
  const double range = std::ldexp(1.0, 64), half = std::ldexp(1.0, 63);
  // fmod is exact and keeps v's sign; moving by 2^64 only from |m| >= 2^63 stays exact (there m
  // is a multiple of 2^11), where -1 + 2^64 would round.
  double m = std::fmod(std::trunc(v), range);
  if (m >= half) m -= range;
  if (m < -half) m += range;
  return static_cast<int64_t>(m);
}

Expr MakeConst(Type t, double value) {
  if (t.is_float()) {
    Expr e = FloatImm::Make(t.ElementOf(), value);
    return t.is_vector() ? Broadcast::Make(e, t.lanes()) : e;
  }
  Expr e = IntImm::Make(t.ElementOf(), WrapToInt64(value));
  return t.is_vector() ? Broadcast::Make(e, t.lanes()) : e;
}

const int64_t* AsConstInt(const Expr& e) {
  auto* imm = e.As<IntImm>();
  return imm ? &imm->value : nullptr;
}

bool IsConstInt(const Expr& e, int64_t value) {
  auto* v = AsConstInt(e);
  return v && *v == value;
}

namespace {

bool IsConst(const Expr& e) { return e.As<IntImm>() || e.As<FloatImm>(); }

/// Whether `e` is an int64 constant outside int32's range.
bool IsWideConst(const Expr& e) {
  auto* i = e.As<IntImm>();
  return i && i->type.bits() == 64 && (i->value > INT32_MAX || i->value < INT32_MIN);
}

/// Brings two operands to one type: constants adopt the other side's type (but an int32 one
/// meeting an int64 constant, or an int64 constant past int32's range, widens instead:
/// 64-bit index arithmetic must not be folded in 32 bits), scalars are broadcast to the other
/// side's lanes.
void Unify(Expr& a, Expr& b) {
  if (a.type() == b.type()) return;
  if ((IsConst(a) && IsConst(b)) || IsWideConst(a) || IsWideConst(b)) {
    WidenIndexOperands(a, b);
    if (a.type() == b.type()) return;
  }
  if (a.type().ElementOf() != b.type().ElementOf()) {
    if (IsConst(a) && a.type().is_scalar()) {
      double v =
          a.As<IntImm>() ? static_cast<double>(a.As<IntImm>()->value) : a.As<FloatImm>()->value;
      a = MakeConst(b.type().ElementOf(), v);
    } else if (IsConst(b) && b.type().is_scalar()) {
      double v =
          b.As<IntImm>() ? static_cast<double>(b.As<IntImm>()->value) : b.As<FloatImm>()->value;
      b = MakeConst(a.type().ElementOf(), v);
    }
  }
  if (a.type().lanes() != b.type().lanes()) {
    if (a.type().is_scalar()) a = Broadcast::Make(a, b.type().lanes());
    if (b.type().is_scalar()) b = Broadcast::Make(b, a.type().lanes());
  }
}

}  // namespace

#define CINN_LIKE_DEFINE_OPERATOR(op, node)        \
  Expr operator op(Expr a, Expr b) {               \
    Unify(a, b);                                   \
    return node::Make(std::move(a), std::move(b)); \
  }
CINN_LIKE_DEFINE_OPERATOR(+, Add)
CINN_LIKE_DEFINE_OPERATOR(-, Sub)
CINN_LIKE_DEFINE_OPERATOR(*, Mul)
CINN_LIKE_DEFINE_OPERATOR(/, Div)
CINN_LIKE_DEFINE_OPERATOR(%, Mod)
CINN_LIKE_DEFINE_OPERATOR(<, LT)
CINN_LIKE_DEFINE_OPERATOR(<=, LE)
CINN_LIKE_DEFINE_OPERATOR(>, GT)
CINN_LIKE_DEFINE_OPERATOR(>=, GE)
CINN_LIKE_DEFINE_OPERATOR(==, EQ)
CINN_LIKE_DEFINE_OPERATOR(!=, NE)
CINN_LIKE_DEFINE_OPERATOR(&&, And)
CINN_LIKE_DEFINE_OPERATOR(||, Or)
#undef CINN_LIKE_DEFINE_OPERATOR

Expr min(Expr a, Expr b) {
  Unify(a, b);
  return Min::Make(std::move(a), std::move(b));
}
Expr max(Expr a, Expr b) {
  Unify(a, b);
  return Max::Make(std::move(a), std::move(b));
}
Expr operator!(Expr a) { return Not::Make(std::move(a)); }
Expr operator-(Expr a) { return MakeConst(a.type(), 0) - a; }

}  // namespace cinn_like::ir
