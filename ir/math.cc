/// \file The math op list, name lookup, the lang helpers and the math call check.
#include "ir/math.h"

#include <glog/logging.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

constexpr MathOpInfo kMathOps[] = {
#define CINN_LIKE_MATH_ROW(op, name, arity) {MathOp::k##op, name, arity},
    CINN_LIKE_MATH_OPS(CINN_LIKE_MATH_ROW)
#undef CINN_LIKE_MATH_ROW
};
static_assert(CoversEveryMathOp(kMathOps));

/// Finds the math calls of the values each Store writes, naming the stored tensor.
class MathCallChecker : public IRVisitor {
 public:
  explicit MathCallChecker(const std::string& func) : func_(func) {}
  absl::Status status;

 protected:
  void VisitStore(const Store* op) override {
    tensor_ = op->buffer->name;
    IRVisitor::VisitStore(op);
    tensor_.clear();
  }
  void VisitCall(const Call* op) override {
    IRVisitor::VisitCall(op);
    if (op->call_kind != Call::CallKind::kPure || !status.ok()) return;
    std::string where = absl::StrCat("function ", func_, ": ",
                                     tensor_.empty() ? "" : absl::StrCat("tensor ", tensor_, ": "));
    auto math = MathOpFromName(op->name);
    if (!math) {
      status = absl::InvalidArgumentError(absl::StrCat(where, "unknown math function ", op->name));
      return;
    }
    const MathOpInfo& info = GetMathOpInfo(*math);
    if (static_cast<int>(op->args.size()) != info.arity) {
      status =
          absl::InvalidArgumentError(absl::StrCat(where, "math function ", info.name, " takes ",
                                                  info.arity, " arguments, got ", op->args.size()));
      return;
    }
    for (const Expr& a : op->args) {
      if (!a.type().is_float()) {
        status = absl::InvalidArgumentError(
            absl::StrCat(where, "math function ", info.name,
                         " takes a floating-point type (float16, bfloat16, float32, float64), got ",
                         a.type().ToString()));
        return;
      }
      if (a.type() != op->type) {
        status = absl::InvalidArgumentError(
            absl::StrCat(where, "math function ", info.name, " of type ", op->type.ToString(),
                         " has an argument of type ", a.type().ToString()));
        return;
      }
    }
  }

 private:
  const std::string& func_;
  std::string tensor_;
};

}  // namespace

const MathOpInfo& GetMathOpInfo(MathOp op) { return kMathOps[static_cast<int>(op)]; }

std::optional<MathOp> MathOpFromName(const std::string& name) {
  static const auto* names = [] {
    auto* m = new std::map<std::string, MathOp>();
    for (const MathOpInfo& info : kMathOps) (*m)[info.name] = info.op;
    return m;
  }();
  auto it = names->find(name);
  if (it == names->end()) return std::nullopt;
  return it->second;
}

Type MathComputeType(const Type& t) {
  return t.is_low_precision_float() ? Float(32, t.lanes()) : t;
}

Expr MathCall(MathOp op, std::vector<Expr> args) {
  CHECK(!args.empty() && args[0].defined()) << GetMathOpInfo(op).name << " of no argument";
  Type t = args[0].type();
  for (size_t i = 1; i < args.size(); ++i) {
    const Expr& a = args[i];
    if (a.type() == t || !a.type().is_scalar()) continue;
    if (auto* f = a.As<FloatImm>()) {
      if (t.is_float()) args[i] = MakeConst(t, f->value);
    } else if (auto* n = a.As<IntImm>()) {
      if (t.is_float()) args[i] = MakeConst(t, static_cast<double>(n->value));
    }
  }
  return Call::Make(t, GetMathOpInfo(op).name, std::move(args));
}

Expr Exp(Expr x) { return MathCall(MathOp::kExp, {std::move(x)}); }
Expr Log(Expr x) { return MathCall(MathOp::kLog, {std::move(x)}); }
Expr Tanh(Expr x) { return MathCall(MathOp::kTanh, {std::move(x)}); }
Expr Erf(Expr x) { return MathCall(MathOp::kErf, {std::move(x)}); }
Expr Sqrt(Expr x) { return MathCall(MathOp::kSqrt, {std::move(x)}); }
Expr Rsqrt(Expr x) { return MathCall(MathOp::kRsqrt, {std::move(x)}); }
Expr Pow(Expr x, Expr y) { return MathCall(MathOp::kPow, {std::move(x), std::move(y)}); }
Expr FastExp(Expr x) { return MathCall(MathOp::kFastExp, {std::move(x)}); }
Expr FastRecip(Expr x) { return MathCall(MathOp::kFastRecip, {std::move(x)}); }

absl::Status CheckMathCalls(const std::string& func, const Stmt& body) {
  MathCallChecker checker(func);
  checker.Visit(body);
  return checker.status;
}

}  // namespace cinn_like::ir
