/// \file The IR printer: one Visit per node, writing to a stream.
#include "ir/printer.h"

#include <iomanip>
#include <limits>
#include <sstream>

#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

class Printer : public IRVisitor {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}
  using IRVisitor::Visit;

 protected:
  void VisitIntImm(const IntImm* op) override {
    if (op->type == Int(32)) {
      os_ << op->value;
    } else if (op->type.is_bool()) {
      os_ << (op->value ? "true" : "false");
    } else {
      os_ << op->type.ToString() << "(" << op->value << ")";
    }
  }
  void VisitFloatImm(const FloatImm* op) override {
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<double>::max_digits10) << op->value;
    std::string text = s.str();
    if (text.find_first_of(".eni") == std::string::npos) text += ".0";
    os_ << text;
    if (op->type == Float(32)) os_ << "f";
    if (op->type.bits() != 32 && op->type.bits() != 64) os_ << "_" << op->type.ToString();
  }
  void VisitStringImm(const StringImm* op) override { os_ << '"' << op->value << '"'; }
  void VisitVariable(const Variable* op) override { os_ << op->name; }

#define CINN_LIKE_PRINT_BINARY(name, sym) \
  void Visit##name(const name* op) override { PrintBinary(op, sym); }
  CINN_LIKE_BINARY_NODES(CINN_LIKE_PRINT_BINARY)
#undef CINN_LIKE_PRINT_BINARY

  void VisitNot(const Not* op) override {
    os_ << "!";
    Visit(op->a);
  }
  void VisitSelect(const Select* op) override {
    os_ << "select(";
    Visit(op->cond);
    os_ << ", ";
    Visit(op->true_value);
    os_ << ", ";
    Visit(op->false_value);
    os_ << ")";
  }
  void VisitCast(const Cast* op) override {
    os_ << op->type.ToString() << "(";
    Visit(op->value);
    os_ << ")";
  }
  void VisitLoad(const Load* op) override {
    os_ << op->buffer->name << "[";
    PrintList(op->indices);
    os_ << "]";
  }
  void VisitRamp(const Ramp* op) override {
    os_ << "ramp(";
    Visit(op->base);
    os_ << ", ";
    Visit(op->stride);
    os_ << ", " << op->lanes << ")";
  }
  void VisitBroadcast(const Broadcast* op) override {
    os_ << "broadcast(";
    Visit(op->value);
    os_ << ", " << op->lanes << ")";
  }
  void VisitCall(const Call* op) override {
    os_ << op->name << "(";
    PrintList(op->args);
    os_ << ")";
  }

  void VisitStore(const Store* op) override {
    Indent();
    os_ << op->buffer->name << "[";
    PrintList(op->indices);
    os_ << "] = ";
    Visit(op->value);
    os_ << "\n";
  }
  void VisitFor(const For* op) override {
    Indent();
    if (op->bind_axis >= 0) {
      os_ << ForKindName(op->for_kind) << "."
          << "xyz"[op->bind_axis] << " ";
    } else if (op->for_kind != ForKind::kSerial) {
      os_ << ForKindName(op->for_kind) << " ";
    }
    os_ << "for (" << op->loop_var.name() << ", ";
    Visit(op->min);
    os_ << ", ";
    Visit(op->extent);
    os_ << ") {\n";
    Nested(op->body);
    Indent();
    os_ << "}\n";
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    Indent();
    os_ << "if (";
    Visit(op->cond);
    os_ << ") {\n";
    Nested(op->then_case);
    if (op->else_case.defined()) {
      Indent();
      os_ << "} else {\n";
      Nested(op->else_case);
    }
    Indent();
    os_ << "}\n";
  }
  void VisitEvaluate(const Evaluate* op) override {
    Indent();
    Visit(op->value);
    os_ << "\n";
  }
  void VisitAllocate(const Allocate* op) override {
    static const char* kScopes[] = {"global", "shared", "local"};
    Indent();
    os_ << "allocate " << op->buffer->name << "[" << op->buffer->dtype.ToString();
    for (auto& d : op->buffer->shape) {
      os_ << " * ";
      Visit(d);
    }
    os_ << "] in " << kScopes[static_cast<int>(op->buffer->scope)] << "\n";
    Visit(op->body);
  }
  void VisitLetStmt(const LetStmt* op) override {
    Indent();
    os_ << "let " << op->var.name() << " = ";
    Visit(op->value);
    os_ << "\n";
    Visit(op->body);
  }

 private:
  void PrintBinary(const BinaryNode* op, const char* sym) {
    bool is_fn = sym[0] >= 'a' && sym[0] <= 'z';
    if (is_fn) {
      os_ << sym << "(";
      Visit(op->a);
      os_ << ", ";
      Visit(op->b);
      os_ << ")";
    } else {
      os_ << "(";
      Visit(op->a);
      os_ << " " << sym << " ";
      Visit(op->b);
      os_ << ")";
    }
  }
  void PrintList(const std::vector<Expr>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) os_ << ", ";
      Visit(list[i]);
    }
  }
  void Indent() { os_ << std::string(2 * depth_, ' '); }
  void Nested(const Stmt& s) {
    ++depth_;
    Visit(s);
    --depth_;
  }

  std::ostream& os_;
  int depth_ = 0;
};

}  // namespace

std::string ToString(const Expr& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

std::string ToString(const Stmt& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  Printer(os).Visit(e);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  Printer(os).Visit(s);
  return os;
}

}  // namespace cinn_like::ir
