/// \file CodeGenLLVM: code outlined into functions of its own: the closure of what an outlined
/// body reads (shared with the parallel loop's body, codegen_llvm_stmt.cc), and the entry's
/// top-level loop nests.
///
/// A Program of many ops lowers to an entry holding one loop nest per fusion group. LLVM's work
/// on a function grows faster than its size (scalar evolution walks the blocks that dominate
/// each loop; IndVarSimplify, the unrollers and strength reduction ask it for every loop), so
/// each top-level nest becomes `i32 <entry>_nest_<k>(ptr closure, ptr stream)`, which the entry
/// calls with the values the nest reads (buffer addresses, symbolic dims) in a closure struct.
/// Repeated layers repeat the same nests on other tensors: a nest equal to one emitted before up
/// to buffers and free variables (ir::StructuralEqualUpToBuffers) calls that function, so the
/// machine code of a layer is made once however many layers the model has.
#include <llvm/IR/IRBuilder.h>

#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_llvm.h"
#include "backends/llvm/free_vars.h"
#include "ir/structural_equal.h"

namespace cinn_like::backends {

CodeGenLLVM::Closure CodeGenLLVM::Capture(const ir::Stmt& body, const ir::Variable* defined,
                                          std::vector<llvm::Value*> leading) {
  FreeVars fv;
  if (defined) fv.defined.insert(defined);
  fv.Visit(body);
  Closure c;
  c.values = std::move(leading);
  for (auto* v : fv.vars) {
    if (!vars_.count(v)) continue;  // reported as unbound when the body is emitted
    c.vars.push_back(v);
    c.values.push_back(EntryValue(v));
  }
  std::vector<llvm::Type*> types;
  for (llvm::Value* value : c.values) types.push_back(value->getType());
  c.type = llvm::StructType::get(*context_, types);
  return c;
}

void CodeGenLLVM::StoreClosure(const Closure& c, llvm::Value* slot) {
  for (size_t k = 0; k < c.values.size(); ++k) {
    builder_->CreateStore(c.values[k],
                          builder_->CreateStructGEP(c.type, slot, static_cast<unsigned>(k)));
  }
}

std::vector<llvm::Value*> CodeGenLLVM::LoadClosure(const Closure& c, llvm::Value* in) {
  auto& b = *builder_;
  const size_t leading = c.values.size() - c.vars.size();
  std::vector<llvm::Value*> loads;
  for (size_t k = 0; k < c.values.size(); ++k) {
    llvm::Value* field = b.CreateStructGEP(c.type, in, static_cast<unsigned>(k));
    llvm::Type* type = c.type->getElementType(static_cast<unsigned>(k));
    if (k < leading) {
      loads.push_back(b.CreateLoad(type, field));
    } else {
      const ir::Variable* v = c.vars[k - leading];
      vars_[v] = b.CreateLoad(type, field, v->name);
    }
  }
  return loads;
}

CodeGenLLVM::OutlinedScope::OutlinedScope(CodeGenLLVM* cg, llvm::Function* fn, llvm::Value* stream)
    : cg_(cg),
      fn_(cg->function_),
      stream_(cg->stream_),
      ip_(cg->builder_->saveIP()),
      vars_(std::move(cg->vars_)),
      unwinds_(std::move(cg->unwinds_)) {
  cg->vars_.clear();
  cg->unwinds_.clear();
  cg->function_ = fn;
  cg->stream_ = stream;
  cg->builder_->SetInsertPoint(llvm::BasicBlock::Create(*cg->context_, "entry", fn));
}

CodeGenLLVM::OutlinedScope::~OutlinedScope() {
  cg_->function_ = fn_;
  cg_->stream_ = stream_;
  cg_->vars_ = std::move(vars_);
  cg_->unwinds_ = std::move(unwinds_);
  cg_->builder_->restoreIP(ip_);
}

void CodeGenLLVM::EmitOutlinedNest(const ir::Stmt& nest) {
  auto& b = *builder_;
  Closure closure = Capture(nest, nullptr);

  size_t hash = ir::StructuralHashUpToBuffers(nest);
  llvm::Function* fn = nullptr;
  auto [begin, end] = outlined_.equal_range(hash);
  for (auto it = begin; it != end && !fn; ++it) {
    if (ir::StructuralEqualUpToBuffers(it->second.nest, nest)) fn = it->second.fn;
  }
  if (!fn) {
    auto* fn_ty = llvm::FunctionType::get(i32(), {ptr(), ptr()}, false);
    fn = llvm::Function::Create(fn_ty, llvm::Function::InternalLinkage,
                                absl::StrCat(func_name_, "_nest_", nest_count_++), *module_);
    fn->addFnAttr(llvm::Attribute::NoInline);  // the point is a function of its own
    outlined_.emplace(hash, Outlined{nest, fn});
    // The entry frees its own workspaces when this returns an error.
    OutlinedScope scope(this, fn, fn->getArg(1));
    OpenUnwind("return_error");
    LoadClosure(closure, fn->getArg(0));
    EmitFor(nest.As<ir::For>());
    b.CreateRet(b.getInt32(0));
    CloseUnwind([] {});
  }

  // One closure slot per struct type serves every call (the calls run one after another and
  // keep nothing of it).
  llvm::AllocaInst*& slot = closures_[closure.type];
  if (!slot) slot = EntryAlloca(closure.type, nullptr, "closure");
  StoreClosure(closure, slot);
  ReturnIfNonzero(b.CreateCall(fn, {slot, CurrentStream()}));
}

}  // namespace cinn_like::backends
