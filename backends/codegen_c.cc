/// \file The C printer: one Visit per node.
#include "backends/codegen_c.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"

namespace cinn_like::backends {
namespace {

/// C math function for an IR math call on float32 (suffix f) or float64.
std::string MathName(const std::string& name, const ir::Type& t) {
  static const std::map<std::string, std::string> kNames = {
      {"exp", "exp"},     {"log", "log"},     {"sqrt", "sqrt"},   {"sin", "sin"},
      {"cos", "cos"},     {"tanh", "tanh"},   {"fabs", "fabs"},   {"abs", "fabs"},
      {"floor", "floor"}, {"ceil", "ceil"},   {"round", "round"}, {"pow", "pow"},
      {"erf", "erf"},     {"rsqrt", "rsqrt"}, {"log1p", "log1p"}, {"exp2", "exp2"},
      {"log2", "log2"},   {"sigmoid", ""}};
  std::string base = name;
  if (!base.empty() && base.back() == 'f' && kNames.count(base.substr(0, base.size() - 1))) {
    base.pop_back();
  }
  auto it = kNames.find(base);
  if (it == kNames.end() || it->second.empty()) return "";
  return t.bits() == 32 ? it->second + "f" : it->second;
}

/// C operator precedence of the form `e` prints as (higher binds tighter).
int Precedence(const ir::Expr& e) {
  switch (e.kind()) {
    case ir::IrNodeKind::kMul:
    case ir::IrNodeKind::kDiv:
      return 13;
    case ir::IrNodeKind::kMod:
      return e.type().is_float() ? 16 : 13;  // fmodf(a, b)
    case ir::IrNodeKind::kAdd:
    case ir::IrNodeKind::kSub:
      return 12;
    case ir::IrNodeKind::kLT:
    case ir::IrNodeKind::kLE:
    case ir::IrNodeKind::kGT:
    case ir::IrNodeKind::kGE:
      return 10;
    case ir::IrNodeKind::kEQ:
    case ir::IrNodeKind::kNE:
      return 9;
    case ir::IrNodeKind::kAnd:
      return 5;
    case ir::IrNodeKind::kOr:
      return 4;
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
  std::ostringstream os;
  if (std::isinf(v)) {
    os << (v < 0 ? "-" : "") << (t.bits() == 32 ? "HUGE_VALF" : "HUGE_VAL");
    return os.str();
  }
  if (std::isnan(v))
    return t.bits() == 32 ? "__int_as_float(0x7fc00000)"
                          : "__longlong_as_double(0x7ff8000000000000LL)";
  // Shortest text that reads back to the same value of the literal's width.
  int digits = t.bits() == 32 ? std::numeric_limits<float>::max_digits10
                              : std::numeric_limits<double>::max_digits10;
  for (int p = 1; p <= digits; ++p) {
    os.str("");
    os << std::setprecision(p) << v;
    if (t.bits() == 32 ? std::stof(os.str()) == static_cast<float>(v) : std::stod(os.str()) == v) {
      break;
    }
  }
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (t.bits() == 32) s += "f";
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
  *expr_ << PrintOperand(op->a, prec) << " " << sym << " " << PrintOperand(op->b, prec, true);
}

#define CINN_LIKE_C_BINARY(name, sym, prec) \
  void CodeGenC::Visit##name(const ir::name* op) { PrintBinary(op, sym, prec); }
CINN_LIKE_C_BINARY(Add, "+", 12)
CINN_LIKE_C_BINARY(Sub, "-", 12)
CINN_LIKE_C_BINARY(Mul, "*", 13)
CINN_LIKE_C_BINARY(Div, "/", 13)
CINN_LIKE_C_BINARY(LT, "<", 10)
CINN_LIKE_C_BINARY(LE, "<=", 10)
CINN_LIKE_C_BINARY(GT, ">", 10)
CINN_LIKE_C_BINARY(GE, ">=", 10)
CINN_LIKE_C_BINARY(EQ, "==", 9)
CINN_LIKE_C_BINARY(NE, "!=", 9)
CINN_LIKE_C_BINARY(And, "&&", 5)
CINN_LIKE_C_BINARY(Or, "||", 4)
#undef CINN_LIKE_C_BINARY

void CodeGenC::VisitMod(const ir::Mod* op) {
  if (op->type.is_float()) {
    CheckScalar(op->type, "expression");
    *expr_ << (op->type.bits() == 32 ? "fmodf(" : "fmod(") << Print(op->a) << ", " << Print(op->b)
           << ")";
  } else {
    PrintBinary(op, "%", 13);
  }
}
void CodeGenC::VisitMin(const ir::Min* op) {
  CheckScalar(op->type, "expression");
  *expr_ << "min(" << Print(op->a) << ", " << Print(op->b) << ")";
}
void CodeGenC::VisitMax(const ir::Max* op) {
  CheckScalar(op->type, "expression");
  *expr_ << "max(" << Print(op->a) << ", " << Print(op->b) << ")";
}
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
void CodeGenC::VisitCall(const ir::Call* op) {
  CheckScalar(op->type, "call");
  std::string name = op->name;
  if (op->call_kind == ir::Call::CallKind::kPure) {
    name = MathName(op->name, op->type);
    if (name.empty()) {
      Fail(absl::UnimplementedError(
          absl::StrCat("math function '", op->name, "' in ", Language(), " codegen")));
      name = op->name;
    }
  }
  *expr_ << name << "(";
  for (size_t i = 0; i < op->args.size(); ++i) *expr_ << (i ? ", " : "") << Print(op->args[i]);
  *expr_ << ")";
}

void CodeGenC::VisitStore(const ir::Store* op) {
  if (op->indices.size() != 1) {
    Fail(absl::InternalError("store to " + op->buffer->name + " before storage flattening"));
    return;
  }
  CheckScalar(op->value.type(), "store");
  Indent();
  out_ << op->buffer->name << "[" << Print(op->indices[0]) << "] = " << Print(op->value) << ";\n";
}

void CodeGenC::PrintBoundFor(const ir::For* op) {
  Fail(absl::InvalidArgumentError("loop " + op->loop_var.name() +
                                  " is bound to a GPU axis, which C source cannot express"));
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
    // not collide with a sibling's.
    // So does a let: its name must not leak to the siblings.
    bool scoped = op->stmts.size() > 1 &&
                  ((s.As<ir::For>() && (s.As<ir::For>()->for_kind == ir::ForKind::kGpuBlock ||
                                        s.As<ir::For>()->for_kind == ir::ForKind::kGpuThread)) ||
                   s.As<ir::LetStmt>());
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
  ir::Expr size(1);
  int64_t count = 1;
  for (auto& d : b->shape) {
    const int64_t* c = ir::AsConstInt(d);
    if (!c) {
      Fail(absl::InvalidArgumentError("local buffer " + b->name + " has non-constant size " +
                                      ir::ToString(d)));
      return;
    }
    count *= *c;
  }
  Indent();
  out_ << ScopePrefix(b->scope) << TypeName(b->dtype) << " " << b->name << "[" << count << "];\n";
  PrintStmt(op->body);
}

}  // namespace cinn_like::backends
