/// \file What the GPU-like targets' host code shares for kernel launches (CodeGenLLVM's
/// EmitKernelLaunchHead and HostBuffers): each backend's host code generator adds how its
/// runtime takes the arguments.
#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_llvm.h"
#include "ir/visitor.h"

namespace cinn_like::backends {

bool CodeGenLLVM::EmitKernelLaunchHead(const ir::Call* op, KernelLaunch* out) {
  auto& b = builder();
  auto* kernel = op->args.empty() ? nullptr : op->args[0].As<ir::StringImm>();
  if (op->args.size() < kLaunchFixedArgs || !kernel) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat(op->name, " needs a kernel name, grid x/y/z, block x/y/z and shared-memory ",
                     "bytes, got ", op->args.size(), " arguments")));
    return false;
  }
  out->name = kernel->value;
  out->dims.clear();
  for (size_t k = 1; k < kLaunchFixedArgs; ++k) {
    const ir::Expr& e = op->args[k];
    if (!e.type().is_integer() || e.type().is_vector()) {
      Fail(absl::InvalidArgumentError(absl::StrCat("launch of ", out->name, ": argument ", k,
                                                   " has type ", e.type().ToString(),
                                                   ", expected int32")));
      return false;
    }
    out->dims.push_back(b.CreateIntCast(EmitExpr(e), i32(), e.type().is_int()));
  }
  const std::string symbol = out->name + "_ptr_";
  auto* slot = module().getNamedGlobal(symbol);
  if (!slot) {
    slot = new llvm::GlobalVariable(module(), ptr(), false, llvm::GlobalValue::ExternalLinkage,
                                    nullptr, symbol);
  }
  out->handle = b.CreateLoad(ptr(), slot, out->name + ".handle");
  return true;
}

std::unordered_map<const ir::Variable*, ir::Buffer> CodeGenLLVM::HostBuffers(
    const ir::Module& module) {
  struct Workspaces : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    std::unordered_map<const ir::Variable*, ir::Buffer> found;
    void VisitAllocate(const ir::Allocate* op) override {
      found[op->buffer->data.node()] = op->buffer;
      ir::IRVisitor::VisitAllocate(op);
    }
  } workspaces;
  for (const ir::LoweredFunc& f : module.functions) {
    for (const ir::Argument& a : f->args) {
      if (a.is_buffer()) workspaces.found[a.buffer->data.node()] = a.buffer;
    }
    workspaces.Visit(f->body);
  }
  return std::move(workspaces.found);
}

}  // namespace cinn_like::backends
