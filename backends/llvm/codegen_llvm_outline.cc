/// \file CodeGenLLVM: the entry's top-level loop nests outlined into functions of their own.
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

void CodeGenLLVM::EmitOutlinedNest(const ir::Stmt& nest) {
  auto& b = *builder_;
  // What the nest reads from the entry, in first-use order; twins list their counterparts in
  // the same order (the equality pairs them by position in the tree, as this walk does).
  FreeVars fv;
  fv.Visit(nest);
  std::vector<const ir::Variable*> captured;
  std::vector<llvm::Value*> values;
  std::vector<llvm::Type*> types;
  for (auto* v : fv.vars) {
    auto it = vars_.find(v);
    if (it == vars_.end()) continue;  // reported as unbound when the body is emitted
    captured.push_back(v);
    values.push_back(EntryValue(v));
    types.push_back(it->second->getType());
  }
  auto* closure_ty = llvm::StructType::get(*context_, types);

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

    llvm::Function* saved_fn = function_;
    llvm::Value* saved_stream = stream_;
    llvm::IRBuilderBase::InsertPoint saved_ip = b.saveIP();
    auto saved_vars = std::move(vars_);
    auto saved_unwinds = std::move(unwinds_);
    vars_.clear();
    unwinds_.clear();  // the entry frees its own workspaces when this returns an error
    function_ = fn;
    stream_ = fn->getArg(1);
    b.SetInsertPoint(llvm::BasicBlock::Create(*context_, "entry", fn));
    OpenUnwind("return_error");
    llvm::Value* in = fn->getArg(0);
    for (size_t k = 0; k < captured.size(); ++k) {
      vars_[captured[k]] = b.CreateLoad(
          types[k], b.CreateStructGEP(closure_ty, in, static_cast<unsigned>(k)), captured[k]->name);
    }
    EmitFor(nest.As<ir::For>());
    b.CreateRet(b.getInt32(0));
    CloseUnwind([] {});
    function_ = saved_fn;
    stream_ = saved_stream;
    vars_ = std::move(saved_vars);
    unwinds_ = std::move(saved_unwinds);
    b.restoreIP(saved_ip);
  }

  // One closure slot per struct type serves every call (the calls run one after another and
  // keep nothing of it).
  llvm::AllocaInst*& closure = closures_[closure_ty];
  if (!closure) closure = EntryAlloca(closure_ty, nullptr, "closure");
  for (size_t k = 0; k < values.size(); ++k) {
    b.CreateStore(values[k], b.CreateStructGEP(closure_ty, closure, static_cast<unsigned>(k)));
  }
  ReturnIfNonzero(b.CreateCall(fn, {closure, CurrentStream()}));
}

}  // namespace cinn_like::backends
