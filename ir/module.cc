/// \file Helpers over lowered functions and modules.
#include "ir/module.h"

#include <set>
#include <sstream>

#include "ir/intrinsics.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace cinn_like::ir {

int64_t BlockThreads(const LoweredFuncNode& kernel) {
  int64_t threads = 1;
  for (const Expr& d : kernel.block_dims) {
    const int64_t* c = AsConstInt(d);
    threads = c && threads > 0 ? threads * *c : -1;
  }
  return threads;
}

std::vector<Var> ShapeVars(const LoweredFuncNode& func) {
  std::vector<Var> vars;
  std::set<const Variable*> seen;
  struct Collector : IRVisitor {
    std::vector<Var>* vars;
    std::set<const Variable*>* seen;
    Expr current;
    void Visit(const Expr& e) override {
      if (auto* v = e.As<Variable>()) {
        if (seen->insert(v).second) vars->push_back(Var(e));
        return;
      }
      IRVisitor::Visit(e);
    }
    using IRVisitor::Visit;
  } c;
  c.vars = &vars;
  c.seen = &seen;
  for (auto& a : func.args) {
    if (!a.is_buffer()) continue;
    for (auto& d : a.buffer->shape) c.Visit(d);
  }
  return vars;
}

std::string ToString(const LoweredFuncNode& func) {
  std::ostringstream os;
  os << (func.kind == LoweredFuncNode::Kind::kDeviceKernel ? "kernel " : "function ") << func.name
     << "(";
  for (size_t i = 0; i < func.args.size(); ++i) {
    os << (i ? ", " : "") << func.args[i].name();
  }
  os << ")";
  if (func.kind == LoweredFuncNode::Kind::kDeviceKernel) {
    os << " grid(" << func.grid_dims[0] << ", " << func.grid_dims[1] << ", " << func.grid_dims[2]
       << ") block(" << func.block_dims[0] << ", " << func.block_dims[1] << ", "
       << func.block_dims[2] << ")";
  }
  os << " {\n" << func.body << "}\n";
  for (const LoweredFunc& kernel : func.kernels) os << ToString(*kernel);
  return os.str();
}

std::vector<LoweredFunc> DeviceKernels(const Module& module) {
  std::vector<LoweredFunc> kernels;
  for (const LoweredFunc& f : module.functions) {
    kernels.insert(kernels.end(), f->kernels.begin(), f->kernels.end());
  }
  return kernels;
}

std::vector<std::string> LaunchedKernels(const Stmt& s) {
  struct Finder : IRVisitor {
    using IRVisitor::Visit;
    std::vector<std::string> names;
    void VisitCall(const Call* op) override {
      if (op->is_intrinsic(IntrinsicOp::kLaunchKernel) && !op->args.empty()) {
        if (const auto* name = op->args[0].As<StringImm>()) names.push_back(name->value);
      }
      IRVisitor::VisitCall(op);
    }
  } f;
  f.Visit(s);
  return f.names;
}

std::string ToString(const Module& module) {
  std::ostringstream os;
  os << "module " << module.name << " for " << module.target.ToString() << "\n";
  for (auto& f : module.functions) os << ToString(*f);
  return os.str();
}

}  // namespace cinn_like::ir
