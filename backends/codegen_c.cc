/// \file The C printer: one Visit per node.
#include "backends/codegen_c.h"

#include <charconv>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common_subexpressions.h"
#include "backends/philox_source.h"
#include "backends/vector_lanes.h"
#include "ir/math.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace cinn_like::backends {
namespace {

// X(node, C operator, precedence) of the binary nodes that print as a C operator.
// clang-format off
#define CINN_LIKE_C_OPERATORS(X)                                                                \
  X(Add, "+", 12) X(Sub, "-", 12) X(Mul, "*", 13) X(Div, "/", 13) X(LT, "<", 10) X(LE, "<=", 10) \
  X(GT, ">", 10) X(GE, ">=", 10) X(EQ, "==", 9) X(NE, "!=", 9) X(And, "&&", 5) X(Or, "||", 4)
// clang-format on

struct CMathRow {
  ir::MathOp op;
  const char* name;
};

/// The C (and CUDA) math function of each op for float64, in MathOp order.
// clang-format off
constexpr CMathRow kCMathNames[] = {
    {ir::MathOp::kExp, "exp"},         {ir::MathOp::kExp2, "exp2"},
    {ir::MathOp::kExpm1, "expm1"},     {ir::MathOp::kLog, "log"},
    {ir::MathOp::kLog2, "log2"},       {ir::MathOp::kLog10, "log10"},
    {ir::MathOp::kLog1p, "log1p"},     {ir::MathOp::kSqrt, "sqrt"},
    {ir::MathOp::kRsqrt, "rsqrt"},     {ir::MathOp::kCbrt, "cbrt"},
    {ir::MathOp::kSin, "sin"},         {ir::MathOp::kCos, "cos"},
    {ir::MathOp::kTan, "tan"},         {ir::MathOp::kAsin, "asin"},
    {ir::MathOp::kAcos, "acos"},       {ir::MathOp::kAtan, "atan"},
    {ir::MathOp::kSinh, "sinh"},       {ir::MathOp::kCosh, "cosh"},
    {ir::MathOp::kTanh, "tanh"},       {ir::MathOp::kAsinh, "asinh"},
    {ir::MathOp::kAcosh, "acosh"},     {ir::MathOp::kAtanh, "atanh"},
    {ir::MathOp::kErf, "erf"},         {ir::MathOp::kErfc, "erfc"},
    {ir::MathOp::kLgamma, "lgamma"},   {ir::MathOp::kTgamma, "tgamma"},
    {ir::MathOp::kAbs, "fabs"},        {ir::MathOp::kFloor, "floor"},
    {ir::MathOp::kCeil, "ceil"},       {ir::MathOp::kRound, "round"},
    {ir::MathOp::kTrunc, "trunc"},     {ir::MathOp::kRint, "rint"},
    {ir::MathOp::kNearbyint, "nearbyint"}, {ir::MathOp::kPow, "pow"},
    {ir::MathOp::kAtan2, "atan2"},     {ir::MathOp::kFmod, "fmod"},
    {ir::MathOp::kHypot, "hypot"},     {ir::MathOp::kCopysign, "copysign"},
    {ir::MathOp::kFmin, "fmin"},       {ir::MathOp::kFmax, "fmax"},
    {ir::MathOp::kFma, "fma"},         {ir::MathOp::kFastExp, "exp"},
    {ir::MathOp::kFastRecip, "fast_recip"},  // no C function: printed by CodeGenC::Reciprocal
    {ir::MathOp::kMaximum, "cinn_like_maximum"},  // helpers of nan_extremes_source.h
    {ir::MathOp::kMinimum, "cinn_like_minimum"},
};
// clang-format on
static_assert(ir::CoversEveryMathOp(kCMathNames), "one C name per math op, in MathOp order");

/// C operator precedence of the form `e` prints as (higher binds tighter).
int Precedence(const ir::Expr& e) {
  // Arithmetic on float16/bfloat16 prints as a conversion call around float32 arithmetic.
  if (e.type().is_low_precision_float() && e.kind() != ir::IrNodeKind::kSelect) return 16;
  switch (e.kind()) {
#define CINN_LIKE_C_PRECEDENCE(name, sym, prec) \
  case ir::IrNodeKind::k##name:                 \
    return prec;
    CINN_LIKE_C_OPERATORS(CINN_LIKE_C_PRECEDENCE)
#undef CINN_LIKE_C_PRECEDENCE
    case ir::IrNodeKind::kMod:
      return e.type().is_float() ? 16 : 13;  // fmodf(a, b)
    case ir::IrNodeKind::kSelect:
      return 3;
    case ir::IrNodeKind::kNot:
    case ir::IrNodeKind::kCast:
      return 14;
    case ir::IrNodeKind::kIntImm:
      return e.As<ir::IntImm>()->value < 0 ? 14 : 16;
    case ir::IrNodeKind::kFloatImm:
      return std::signbit(e.As<ir::FloatImm>()->value) ? 14 : 16;
    default:
      return 16;  // names, loads, calls, min/max
  }
}

}  // namespace

const char* CMathName(ir::MathOp op) { return kCMathNames[static_cast<int>(op)].name; }

std::string CodeGenC::TypeName(const ir::Type& t) {
  CheckScalar(t, "type");
  switch (t.code()) {
    case ir::Type::Code::kBool:
      return "bool";
    case ir::Type::Code::kFloat:
      if (t.bits() == 32) return "float";
      if (t.bits() == 64) return "double";
      break;
    case ir::Type::Code::kInt:
      if (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) {
        return absl::StrCat("int", t.bits(), "_t");
      }
      break;
    case ir::Type::Code::kUInt:
      if (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) {
        return absl::StrCat("uint", t.bits(), "_t");
      }
      break;
    default:
      break;
  }
  if (!t.is_vector()) {
    Fail(absl::UnimplementedError(
        absl::StrCat("type ", t.ToString(), " in ", Language(), " codegen")));
  }
  return "void";
}

std::string CodeGenC::FloatLiteral(const ir::Type& t, double v) {
  // A float32 literal holds the value rounded to float (constants are rounded where emitted).
  const bool f32 = t.bits() == 32;
  const double x = f32 ? static_cast<double>(static_cast<float>(v)) : v;
  if (std::isinf(x)) return absl::StrCat(x < 0 ? "-" : "", f32 ? "HUGE_VALF" : "HUGE_VAL");
  if (std::isnan(x)) {
    return f32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
  }
  // The shortest text that reads back to the same value of the literal's width (std::to_chars
  // guarantees the round trip, denormals and the largest finite values included).
  char buf[64];
  std::to_chars_result r = f32 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(x))
                               : std::to_chars(buf, buf + sizeof(buf), x);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (f32) s += "f";
  return s;
}

void CodeGenC::CheckScalar(const ir::Type& t, const char* what) {
  if (t.is_vector()) {
    Fail(absl::UnimplementedError(
        absl::StrCat("vector type ", t.ToString(), " in ", Language(), " codegen")));
  }
}

std::string CodeGenC::Print(const ir::Expr& e) {
  std::ostringstream os;
  std::ostringstream* saved = expr_;
  expr_ = &os;
  Visit(e);
  expr_ = saved;
  return os.str();
}

std::string CodeGenC::PrintOperand(const ir::Expr& e, int prec, bool right) {
  int own = Precedence(e);
  // && inside || is legal C but reads badly; parenthesize it.
  bool wrap = own < prec || (right && own == prec) || (prec == 4 && own == 5);
  std::string s = Print(e);
  return wrap ? "(" + s + ")" : s;
}

void CodeGenC::PrintStmt(const ir::Stmt& s) { Visit(s); }

void CodeGenC::VisitIntImm(const ir::IntImm* op) {
  if (op->type.is_bool()) {
    *expr_ << (op->value ? "true" : "false");
  } else if (op->type.bits() == 64) {
    *expr_ << op->value << (op->type.is_uint() ? "ULL" : "LL");
  } else if (op->type.is_uint()) {
    *expr_ << op->value << "U";
  } else {
    *expr_ << op->value;
  }
}
void CodeGenC::VisitFloatImm(const ir::FloatImm* op) {
  *expr_ << FloatLiteral(op->type, op->value);
}
void CodeGenC::VisitStringImm(const ir::StringImm* op) { *expr_ << '"' << op->value << '"'; }
void CodeGenC::VisitVariable(const ir::Variable* op) { *expr_ << op->name; }

void CodeGenC::PrintBinary(const ir::BinaryNode* op, const char* sym, int prec) {
  CheckScalar(op->type, "expression");
  CheckScalar(op->a.type(), "expression");
  const ir::Type& t = op->a.type();
  if (t.is_low_precision_float()) {
    // Computed in float32 and rounded back: see WidenToFloat.
    std::string e =
        absl::StrCat(WidenToFloat(t, Print(op->a)), " ", sym, " ", WidenToFloat(t, Print(op->b)));
    *expr_ << (op->type.is_bool() ? e : NarrowFromFloat(t, e));
    return;
  }
  *expr_ << PrintOperand(op->a, prec) << " " << sym << " " << PrintOperand(op->b, prec, true);
}

std::string CodeGenC::WidenToFloat(const ir::Type& t, const std::string& e) {
  Fail(absl::UnimplementedError(
      absl::StrCat("type ", t.ToString(), " in ", Language(), " codegen")));
  return e;
}

std::string CodeGenC::NarrowFromFloat(const ir::Type& t, const std::string& e) {
  return WidenToFloat(t, e);
}

/// A min/max/fmod-style call `fn(a, b)`, computed in float32 for 16-bit float types.
void CodeGenC::PrintBinaryCall(const ir::BinaryNode* op, const std::string& fn) {
  CheckScalar(op->type, "expression");
  const ir::Type& t = op->type;
  if (t.is_low_precision_float()) {
    *expr_ << NarrowFromFloat(t, absl::StrCat(fn, "(", WidenToFloat(t, Print(op->a)), ", ",
                                              WidenToFloat(t, Print(op->b)), ")"));
    return;
  }
  *expr_ << fn << "(" << Print(op->a) << ", " << Print(op->b) << ")";
}

#define CINN_LIKE_C_BINARY(name, sym, prec) \
  void CodeGenC::Visit##name(const ir::name* op) { PrintBinary(op, sym, prec); }
CINN_LIKE_C_OPERATORS(CINN_LIKE_C_BINARY)
#undef CINN_LIKE_C_BINARY

void CodeGenC::VisitMod(const ir::Mod* op) {
  if (op->type.is_float()) {
    PrintBinaryCall(op, op->type.bits() == 64 ? "fmod" : "fmodf");
  } else {
    PrintBinary(op, "%", 13);
  }
}
void CodeGenC::VisitMin(const ir::Min* op) { PrintBinaryCall(op, "min"); }
void CodeGenC::VisitMax(const ir::Max* op) { PrintBinaryCall(op, "max"); }
void CodeGenC::VisitNot(const ir::Not* op) { *expr_ << "!" << PrintOperand(op->a, 14); }
void CodeGenC::VisitSelect(const ir::Select* op) {
  CheckScalar(op->type, "expression");
  *expr_ << PrintOperand(op->cond, 4) << " ? " << PrintOperand(op->true_value, 4) << " : "
         << PrintOperand(op->false_value, 3);
}
void CodeGenC::VisitCast(const ir::Cast* op) {
  *expr_ << "(" << TypeName(op->type) << ")" << PrintOperand(op->value, 14);
}
void CodeGenC::VisitLoad(const ir::Load* op) {
  CheckScalar(op->type, "load");
  if (op->indices.size() != 1) {
    Fail(absl::InternalError("load from " + op->buffer->name + " before storage flattening"));
    return;
  }
  CheckScalar(op->indices[0].type(), "index");
  *expr_ << op->buffer->name << "[" << Print(op->indices[0]) << "]";
}
void CodeGenC::VisitRamp(const ir::Ramp* op) { CheckScalar(op->type, "ramp"); }
void CodeGenC::VisitBroadcast(const ir::Broadcast* op) { CheckScalar(op->type, "broadcast"); }
std::string CodeGenC::MathFunctionName(ir::MathOp op, const ir::Type& t) {
  return t.bits() == 32 ? absl::StrCat(CMathName(op), "f") : CMathName(op);
}
std::string CodeGenC::Reciprocal(const ir::Type& t, const std::string& x) {
  return absl::StrCat("(", t.bits() == 32 ? "1.0f / " : "1.0 / ", x, ")");
}

void CodeGenC::VisitCall(const ir::Call* op) {
  CheckScalar(op->type, "call");
  if (op->intrinsic && *op->intrinsic == ir::IntrinsicOp::kPhiloxUniform) {
    uses_philox_ = true;  // printed as the helper of philox_source.h, in every C-like language
  }
  if (op->intrinsic) {
    const char* fn = *op->intrinsic == ir::IntrinsicOp::kPhiloxUniform
                         ? kPhiloxFunction
                         : IntrinsicFunctionName(*op->intrinsic);
    if (!fn) {
      Fail(absl::UnimplementedError(
          absl::StrCat("intrinsic ", op->name, " in ", Language(), " codegen")));
      fn = op->name.c_str();
    }
    *expr_ << fn << "(";
    for (size_t i = 0; i < op->args.size(); ++i) *expr_ << (i ? ", " : "") << Print(op->args[i]);
    *expr_ << ")";
    return;
  }
  auto math = ir::MathOpFromName(op->name);
  if (!math) {
    Fail(absl::UnimplementedError(
        absl::StrCat("math function '", op->name, "' in ", Language(), " codegen")));
    *expr_ << op->name << "(...)";
    return;
  }
  const ir::MathOpInfo& info = ir::GetMathOpInfo(*math);
  const ir::Type& t = op->type;
  bool types_ok = t.is_float() && static_cast<int>(op->args.size()) == info.arity;
  for (auto& a : op->args) types_ok &= a.type() == t;
  if (!types_ok) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("math function '", info.name, "' of type ", t.ToString(), " on ",
                     op->args.size(), " arguments in ", Language(), " codegen: it takes ",
                     info.arity, " arguments of one floating-point type")));
    return;
  }
  // float16/bfloat16: computed in float32, rounded back once.
  ir::Type ct = ir::MathComputeType(t);
  std::vector<std::string> args;
  for (auto& a : op->args) {
    args.push_back(t.is_low_precision_float() ? WidenToFloat(t, Print(a)) : Print(a));
  }
  std::string call;
  uses_nan_extremes_ |= *math == ir::MathOp::kMaximum || *math == ir::MathOp::kMinimum;
  if (*math == ir::MathOp::kFastRecip) {
    call = Reciprocal(ct, args[0]);
  } else if (*math == ir::MathOp::kRsqrt && !(FastMath() && ct.bits() == 32)) {
    call = absl::StrCat("(", ct.bits() == 32 ? "1.0f / sqrtf(" : "1.0 / sqrt(", args[0], "))");
  } else {
    call = absl::StrCat(MathFunctionName(*math, ct), "(");
    for (size_t i = 0; i < args.size(); ++i) absl::StrAppend(&call, i ? ", " : "", args[i]);
    call += ")";
  }
  *expr_ << (t.is_low_precision_float() ? NarrowFromFloat(t, call) : call);
}

void CodeGenC::VisitStore(const ir::Store* op) {
  if (op->value.type().is_vector() || HasVectorReduce(op->value)) {
    PrintVectorStore(op);
  } else {
    PrintScalarStore(op);
  }
}

void CodeGenC::PrintScalarStore(const ir::Store* op) {
  if (op->indices.size() != 1) {
    Fail(absl::InternalError("store to " + op->buffer->name + " before storage flattening"));
    return;
  }
  CheckScalar(op->value.type(), "store");
  const ir::Expr value = PrintCommonSubexpressions(op->value);
  Indent();
  out_ << op->buffer->name << "[" << Print(op->indices[0]) << "] = " << Print(value) << ";\n";
}

ir::Expr CodeGenC::PrintCommonSubexpressions(const ir::Expr& e) {
  CommonSubexpressions common =
      ExtractCommonSubexpressions(e, [this] { return absl::StrCat("cse_", cse_count_++); });
  for (const auto& [var, value] : common.defs) {
    Indent();
    out_ << "const " << TypeName(value.type()) << " " << var->name << " = " << Print(value)
         << ";\n";
  }
  return common.value;
}

void CodeGenC::PrintBoundFor(const ir::For* op) {
  Fail(absl::InvalidArgumentError("loop " + op->loop_var.name() +
                                  " is bound to a GPU axis, which C source cannot express"));
}

void CodeGenC::PrintBoundLoop(const ir::For* op, const ir::Expr& launch, const std::string& index) {
  Indent();
  out_ << TypeName(op->loop_var.type()) << " " << op->loop_var.name() << " = " << index << ";\n";
  if (!ir::IsConstInt(op->min, 0)) {
    Fail(absl::UnimplementedError("bound loop " + op->loop_var.name() + " with a nonzero start"));
  }
  if (ir::StructuralEqual(launch, op->extent)) {
    PrintStmt(op->body);
    return;
  }
  Indent();
  out_ << "if (" << op->loop_var.name() << " < " << Print(op->extent) << ") {\n";
  // A block index's guard is uniform in the block: its threads all reach a barrier inside.
  const int thread_guard = op->for_kind == ir::ForKind::kGpuThread ? 1 : 0;
  guarded_bound_loops_ += thread_guard;
  Nested(op->body);
  guarded_bound_loops_ -= thread_guard;
  Indent();
  out_ << "}\n";
}

void CodeGenC::CheckEveryThreadReaches(const std::string& kernel, const std::string& what) {
  if (guarded_bound_loops_ == 0) return;
  Fail(absl::UnimplementedError(
      "kernel " + kernel + ": " + what +
      " under a thread-bound loop shorter than its launch dimension; every thread of the block "
      "must reach a cross-thread reduction, so bind loops of one axis with equal extents"));
}

int64_t CodeGenC::ConstantElements(const ir::Buffer& b) {
  int64_t count = 1;
  for (const ir::Expr& d : b->shape) {
    const int64_t* c = ir::AsConstInt(d);
    if (!c) return -1;
    count *= *c;
  }
  return count;
}

void CodeGenC::VisitFor(const ir::For* op) {
  if (op->for_kind == ir::ForKind::kGpuBlock || op->for_kind == ir::ForKind::kGpuThread) {
    PrintBoundFor(op);
    return;
  }
  if (op->for_kind == ir::ForKind::kUnrolled || op->for_kind == ir::ForKind::kUnrollHint) {
    Indent();
    out_ << "#pragma unroll\n";
  }
  const std::string& v = op->loop_var.name();
  std::string type = TypeName(op->loop_var.type());
  Indent();
  out_ << "for (" << type << " " << v << " = " << Print(op->min) << "; " << v << " < ";
  if (ir::IsConstInt(op->min, 0)) {
    out_ << Print(op->extent);
  } else {
    out_ << Print(op->min) << " + " << PrintOperand(op->extent, 12, true);
  }
  out_ << "; ++" << v << ") {\n";
  Nested(op->body);
  Indent();
  out_ << "}\n";
}

void CodeGenC::VisitIfThenElse(const ir::IfThenElse* op) {
  Indent();
  out_ << "if (" << Print(op->cond) << ") {\n";
  Nested(op->then_case);
  if (op->else_case.defined()) {
    Indent();
    out_ << "} else {\n";
    Nested(op->else_case);
  }
  Indent();
  out_ << "}\n";
}

void CodeGenC::VisitBlock(const ir::Block* op) {
  for (auto& s : op->stmts) {
    // A bound loop beside other statements gets its own scope: its index declaration must
    // not collide with a sibling's. So do a let and an allocation: their names must not leak
    // to the siblings, which may declare the same (an unrolled loop's copies of a reduction's
    // partials, <X>_block and <X>_tail).
    bool scoped = op->stmts.size() > 1 &&
                  ((s.As<ir::For>() && (s.As<ir::For>()->for_kind == ir::ForKind::kGpuBlock ||
                                        s.As<ir::For>()->for_kind == ir::ForKind::kGpuThread)) ||
                   s.As<ir::LetStmt>() || s.As<ir::Allocate>());
    if (scoped) {
      Indent();
      out_ << "{\n";
      ++indent_;
    }
    PrintStmt(s);
    if (scoped) {
      --indent_;
      Indent();
      out_ << "}\n";
    }
  }
}

void CodeGenC::VisitEvaluate(const ir::Evaluate* op) {
  Indent();
  out_ << Print(op->value) << ";\n";
}

void CodeGenC::VisitLetStmt(const ir::LetStmt* op) {
  Indent();
  out_ << "const " << TypeName(op->var.type()) << " " << op->var.name() << " = " << Print(op->value)
       << ";\n";
  PrintStmt(op->body);
}

void CodeGenC::VisitAllocate(const ir::Allocate* op) {
  const ir::Buffer& b = op->buffer;
  if (b->scope == ir::MemoryScope::kGlobal) {
    Fail(absl::UnimplementedError("global allocation of " + b->name +
                                  " inside device code; intermediates live in the host entry"));
    return;
  }
  const int64_t count = ConstantElements(b);
  if (count < 0) {
    std::string dims;
    for (const ir::Expr& d : b->shape) dims += (dims.empty() ? "" : ", ") + ir::ToString(d);
    Fail(absl::InvalidArgumentError("local buffer " + b->name + " has non-constant size [" + dims +
                                    "]"));
    return;
  }
  Indent();
  out_ << ScopePrefix(b->scope) << MemoryTypeName(b->dtype) << " " << b->name << "[" << count
       << "];\n";
  PrintStmt(op->body);
}

}  // namespace cinn_like::backends
