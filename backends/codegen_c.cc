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

}  // namespace

std::string CodeGenC::TypeName(const ir::Type& t) {
  CheckScalar(t, "type");
  switch (t.code()) {
    case ir::Type::Code::kBool: return "bool";
    case ir::Type::Code::kFloat:
      if (t.bits() == 32) return "float";
      if (t.bits() == 64) return "double";
      break;
    case ir::Type::Code::kInt:
      if (t.bits() == 8) return "signed char";
      if (t.bits() == 16) return "short";
      if (t.bits() == 32) return "int";
      if (t.bits() == 64) return "long long";
      break;
    case ir::Type::Code::kUInt:
      if (t.bits() == 8) return "unsigned char";
      if (t.bits() == 16) return "unsigned short";
      if (t.bits() == 32) return "unsigned int";
      if (t.bits() == 64) return "unsigned long long";
      break;
    default: break;
  }
  Fail(absl::UnimplementedError("type " + t.ToString() + " in C codegen"));
  return "void";
}

std::string CodeGenC::FloatLiteral(const ir::Type& t, double v) {
  std::ostringstream os;
  if (std::isinf(v)) {
    os << (v < 0 ? "-" : "") << (t.bits() == 32 ? "HUGE_VALF" : "HUGE_VAL");
    return os.str();
  }
  os << std::setprecision(std::numeric_limits<double>::max_digits10) << v;
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (t.bits() == 32) s += "f";
  return s;
}

void CodeGenC::CheckScalar(const ir::Type& t, const char* what) {
  if (t.is_vector()) {
    Fail(absl::UnimplementedError(absl::StrCat("vector ", what, " ", t.ToString(),
                                               " in CUDA codegen (vector types come with the "
                                               "schedules issue)")));
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

void CodeGenC::PrintStmt(const ir::Stmt& s) { Visit(s); }

void CodeGenC::VisitIntImm(const ir::IntImm* op) {
  if (op->type.is_bool()) {
    *expr_ << (op->value ? "true" : "false");
  } else if (op->type.bits() == 64) {
    *expr_ << op->value << (op->type.is_uint() ? "ULL" : "LL");
  } else {
    *expr_ << op->value;
  }
}
void CodeGenC::VisitFloatImm(const ir::FloatImm* op) { *expr_ << FloatLiteral(op->type, op->value); }
void CodeGenC::VisitStringImm(const ir::StringImm* op) { *expr_ << '"' << op->value << '"'; }
void CodeGenC::VisitVariable(const ir::Variable* op) { *expr_ << op->name; }

void CodeGenC::PrintBinary(const ir::BinaryNode* op, const char* sym) {
  CheckScalar(op->type, "expression");
  *expr_ << "(" << Print(op->a) << " " << sym << " " << Print(op->b) << ")";
}

#define CINN_LIKE_C_BINARY(name, sym) \
  void CodeGenC::Visit##name(const ir::name* op) { PrintBinary(op, sym); }
CINN_LIKE_C_BINARY(Add, "+")
CINN_LIKE_C_BINARY(Sub, "-")
CINN_LIKE_C_BINARY(Mul, "*")
CINN_LIKE_C_BINARY(EQ, "==")
CINN_LIKE_C_BINARY(NE, "!=")
CINN_LIKE_C_BINARY(LT, "<")
CINN_LIKE_C_BINARY(LE, "<=")
CINN_LIKE_C_BINARY(GT, ">")
CINN_LIKE_C_BINARY(GE, ">=")
CINN_LIKE_C_BINARY(And, "&&")
CINN_LIKE_C_BINARY(Or, "||")
#undef CINN_LIKE_C_BINARY

void CodeGenC::VisitDiv(const ir::Div* op) { PrintBinary(op, "/"); }
void CodeGenC::VisitMod(const ir::Mod* op) {
  if (op->type.is_float()) {
    *expr_ << (op->type.bits() == 32 ? "fmodf(" : "fmod(") << Print(op->a) << ", "
           << Print(op->b) << ")";
  } else {
    PrintBinary(op, "%");
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
void CodeGenC::VisitNot(const ir::Not* op) { *expr_ << "!" << Print(op->a); }
void CodeGenC::VisitSelect(const ir::Select* op) {
  *expr_ << "(" << Print(op->cond) << " ? " << Print(op->true_value) << " : "
         << Print(op->false_value) << ")";
}
void CodeGenC::VisitCast(const ir::Cast* op) {
  *expr_ << "((" << TypeName(op->type) << ")" << Print(op->value) << ")";
}
void CodeGenC::VisitLoad(const ir::Load* op) {
  CheckScalar(op->type, "load");
  if (op->indices.size() != 1) {
    Fail(absl::InternalError("load from " + op->buffer->name + " before storage flattening"));
  }
  *expr_ << op->buffer->name << "[" << Print(op->indices[0]) << "]";
}
void CodeGenC::VisitRamp(const ir::Ramp* op) { CheckScalar(op->type, "ramp"); }
void CodeGenC::VisitBroadcast(const ir::Broadcast* op) { CheckScalar(op->type, "broadcast"); }
void CodeGenC::VisitCall(const ir::Call* op) {
  std::string name = op->name;
  if (op->call_kind == ir::Call::CallKind::kPure) {
    name = MathName(op->name, op->type);
    if (name.empty()) {
      Fail(absl::UnimplementedError("math function '" + op->name + "' in C codegen"));
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
  if (op->for_kind == ir::ForKind::kUnrolled) {
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
    out_ << "(" << Print(op->min) << " + " << Print(op->extent) << ")";
  }
  out_ << "; ++" << v << ") {\n";
  Nested(op->body);
  Indent();
  out_ << "}\n";
}

void CodeGenC::VisitIfThenElse(const ir::IfThenElse* op) {
  Indent();
  std::string cond = Print(op->cond);
  // Comparisons already print their own parentheses.
  bool wrapped = cond.size() > 1 && cond.front() == '(' && cond.back() == ')';
  out_ << "if " << (wrapped ? cond : "(" + cond + ")") << " {\n";
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
    bool scoped = op->stmts.size() > 1 && s.As<ir::For>() &&
                  (s.As<ir::For>()->for_kind == ir::ForKind::kGpuBlock ||
                   s.As<ir::For>()->for_kind == ir::ForKind::kGpuThread);
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
