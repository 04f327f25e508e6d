/// \file CodeGenLLVM: the translation of IR statements (loops of every kind, the parallel
/// loop's outlined body, branches, allocations).
#include "backends/llvm/codegen_llvm.h"

#include <dlpack/dlpack.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace cinn_like::backends {

// Statements

void CodeGenLLVM::EmitStmt(const ir::Stmt& s) {
  if (!s.defined() || !status_.ok()) return;
  if (entry_statements_ != nullptr && s.get() == entry_statements_ && function_ == entry_) {
    EmitEntryStatements(s);
    return;
  }
  switch (s.kind()) {
    case ir::IrNodeKind::kStore:
      EmitStore(s.As<ir::Store>());
      return;
    case ir::IrNodeKind::kFor:
      if (function_ == entry_ && loop_depth_ == 0) {
        EmitOutlinedNest(s);  // a function of its own, shared by the nest's twins
      } else {
        EmitFor(s.As<ir::For>());
      }
      return;
    case ir::IrNodeKind::kIfThenElse:
      EmitIfThenElse(s.As<ir::IfThenElse>());
      return;
    case ir::IrNodeKind::kBlock:
      for (auto& st : s.As<ir::Block>()->stmts) EmitStmt(st);
      return;
    case ir::IrNodeKind::kEvaluate:
      EmitExpr(s.As<ir::Evaluate>()->value);
      return;
    case ir::IrNodeKind::kAllocate:
      EmitAllocate(s.As<ir::Allocate>());
      return;
    case ir::IrNodeKind::kLetStmt: {
      auto* let = s.As<ir::LetStmt>();
      vars_[let->var.node()] = EmitExpr(let->value);
      EmitStmt(let->body);
      vars_.erase(let->var.node());
      return;
    }
    default:
      Fail(absl::InternalError(
          absl::StrCat("expression node ", ir::KindName(s.kind()), " used as a statement")));
  }
}

void CodeGenLLVM::EmitFor(const ir::For* op) {
  switch (op->for_kind) {
    case ir::ForKind::kSerial:
      EmitSerialFor(op, nullptr);
      return;
    case ir::ForKind::kUnrolled:
    case ir::ForKind::kUnrollHint:
      EmitSerialFor(op, ir::AsConstInt(op->extent) ? "llvm.loop.unroll.full" : nullptr);
      return;
    case ir::ForKind::kVectorized:
      EmitSerialFor(op, "llvm.loop.vectorize.enable");
      return;
    case ir::ForKind::kParallel:
      EmitParallelFor(op);
      return;
    case ir::ForKind::kGpuBlock:
    case ir::ForKind::kGpuThread:
      Fail(absl::InternalError(absl::StrCat(
          "loop ", op->loop_var.name(), " is bound to a GPU axis (", ir::ForKindName(op->for_kind),
          ") but reached host code generation: x86 has no GPU axes")));
      return;
  }
}

void CodeGenLLVM::EmitSerialFor(const ir::For* op, const char* loop_hint) {
  auto& b = *builder_;
  llvm::Type* ity = LLVMType(op->loop_var.type());
  llvm::Value* mn = b.CreateIntCast(EmitExpr(op->min), ity, true);
  llvm::Value* ext = b.CreateIntCast(EmitExpr(op->extent), ity, true);
  llvm::Value* end = b.CreateAdd(mn, ext, op->loop_var.name() + ".end");
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(*context_, op->loop_var.name() + ".header", function_);
  auto* body = llvm::BasicBlock::Create(*context_, op->loop_var.name() + ".body", function_);
  auto* exit = llvm::BasicBlock::Create(*context_, op->loop_var.name() + ".exit", function_);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(ity, 2, op->loop_var.name());
  iv->addIncoming(mn, pre);
  b.CreateCondBr(b.CreateICmpSLT(iv, end), body, exit);
  b.SetInsertPoint(body);
  vars_[op->loop_var.node()] = iv;
  ++loop_depth_;
  EmitStmt(op->body);
  --loop_depth_;
  vars_.erase(op->loop_var.node());
  llvm::Value* next = b.CreateAdd(iv, llvm::ConstantInt::get(ity, 1), "", true, true);
  iv->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* back = b.CreateBr(header);
  if (loop_hint) {
    llvm::Metadata* prop = nullptr;
    if (std::string(loop_hint) == "llvm.loop.vectorize.enable") {
      prop = llvm::MDNode::get(*context_, {llvm::MDString::get(*context_, loop_hint),
                                           llvm::ConstantAsMetadata::get(b.getTrue())});
    } else {
      prop = llvm::MDNode::get(*context_, {llvm::MDString::get(*context_, loop_hint)});
    }
    auto temp = llvm::MDNode::getTemporary(*context_, std::nullopt);
    llvm::MDNode* loop = llvm::MDNode::getDistinct(*context_, {temp.get(), prop});
    loop->replaceOperandWith(0, loop);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }
  b.SetInsertPoint(exit);
}

void CodeGenLLVM::EmitParallelFor(const ir::For* op) {
  auto& b = *builder_;
  // What the body needs from outside, by value in a closure: the loop's min, then the body's
  // free variables.
  llvm::Type* ity = LLVMType(op->loop_var.type());
  llvm::Value* mn = b.CreateIntCast(EmitExpr(op->min), ity, true);
  Closure closure = Capture(op->body, op->loop_var.node(), {mn});
  llvm::Value* slot = EntryAlloca(closure.type, nullptr, op->loop_var.name() + ".closure");
  StoreClosure(closure, slot);
  llvm::Value* extent = b.CreateIntCast(EmitExpr(op->extent), i32(), true);

  // The outlined body: void fn(i32 index, ptr closure); it never returns an error, so it frees
  // no workspace of the function around it.
  auto* body_ty = llvm::FunctionType::get(b.getVoidTy(), {i32(), ptr()}, false);
  auto* body_fn = llvm::Function::Create(
      body_ty, llvm::Function::InternalLinkage,
      absl::StrCat(func_name_, "_parallel_", parallel_count_++, "_", op->loop_var.name()),
      *module_);
  {
    OutlinedScope scope(this, body_fn, stream_);  // CurrentStream() is null in the body
    llvm::Value* fmin = LoadClosure(closure, body_fn->getArg(1))[0];
    llvm::Value* index = b.CreateIntCast(body_fn->getArg(0), ity, true);
    vars_[op->loop_var.node()] = b.CreateAdd(fmin, index, op->loop_var.name());
    ++loop_depth_;
    EmitStmt(op->body);
    --loop_depth_;
    b.CreateRetVoid();
  }

  auto parallel_for = RuntimeFunction("cinn_like_parallel_for", i32(), {i32(), ptr(), ptr()});
  llvm::Value* rc = b.CreateCall(parallel_for, {extent, body_fn, slot});
  if (function_->getReturnType()->isIntegerTy(32)) ReturnIfNonzero(rc);
}

void CodeGenLLVM::EmitIfThenElse(const ir::IfThenElse* op) {
  auto& b = *builder_;
  llvm::Value* cond = EmitExpr(op->cond);
  if (!op->cond.type().is_bool() || !op->cond.type().is_scalar()) {
    Fail(absl::InvalidArgumentError("if condition of type " + op->cond.type().ToString()));
    return;
  }
  auto* then_bb = llvm::BasicBlock::Create(*context_, "if.then", function_);
  auto* end_bb = llvm::BasicBlock::Create(*context_, "if.end", function_);
  llvm::BasicBlock* else_bb = end_bb;
  if (op->else_case.defined()) else_bb = llvm::BasicBlock::Create(*context_, "if.else", function_);
  b.CreateCondBr(cond, then_bb, else_bb);
  b.SetInsertPoint(then_bb);
  EmitStmt(op->then_case);
  b.CreateBr(end_bb);
  if (op->else_case.defined()) {
    b.SetInsertPoint(else_bb);
    EmitStmt(op->else_case);
    b.CreateBr(end_bb);
  }
  b.SetInsertPoint(end_bb);
}

llvm::Value* CodeGenLLVM::EmitBufferBytes(const ir::Buffer& buf) {
  auto& b = *builder_;
  const ConstantSize known = SizeOf(buf);
  if (known.constant) return b.getInt64(known.absurd ? -1 : known.bytes);
  llvm::Value* size = b.getInt64(buf->dtype.bytes());
  llvm::Value* overflow = b.getFalse();
  for (auto& d : buf->shape) {
    llvm::Value* mul = b.CreateBinaryIntrinsic(llvm::Intrinsic::umul_with_overflow, size,
                                               b.CreateIntCast(EmitExpr(d), i64(), true));
    size = b.CreateExtractValue(mul, 0);
    overflow = b.CreateOr(overflow, b.CreateExtractValue(mul, 1));
  }
  return b.CreateSelect(overflow, b.getInt64(-1), size, buf->name + ".bytes");
}

void CodeGenLLVM::EmitEntryStatements(const ir::Stmt& s) {
  entry_statements_ = nullptr;
  auto& b = *builder_;
  const auto* block = s.As<ir::Block>();
  const std::vector<ir::Stmt> stmts = block ? block->stmts : std::vector<ir::Stmt>{s};
  auto alloc_fn = RuntimeFunction("cinn_like_alloc_workspace", ptr(), {i32(), i64(), ptr()});
  auto free_fn = RuntimeFunction("cinn_like_free_workspace", i32(), {i32(), ptr(), ptr()});
  llvm::Value* device = b.getInt32(DeviceType());
  llvm::Value* null = llvm::ConstantPointerNull::get(b.getPtrTy());
  // Each workspace's address while it is allocated, null outside: the unwind frees the
  // allocated ones (freeing null does nothing).
  std::vector<llvm::AllocaInst*> slots;
  for (const ArenaPlan::Own& w : own_workspaces_) {
    slots.push_back(EntryAlloca(ptr(), nullptr, w.buffer->name + ".slot"));
    b.CreateStore(null, slots.back(), /*isVolatile=*/true);
  }
  // Only where there is one to free: otherwise failures go to the enclosing unwinds as they are.
  if (!slots.empty()) OpenUnwind("workspaces.unwind");
  ReleaseInputsAfter(-1);
  for (int i = 0; i < static_cast<int>(stmts.size()) && status_.ok(); ++i) {
    AllocateOutputsBefore(i);
    for (size_t k = 0; k < own_workspaces_.size(); ++k) {
      const ArenaPlan::Own& w = own_workspaces_[k];
      if (w.first != i) continue;
      llvm::Value* p =
          b.CreateCall(alloc_fn, {device, b.getInt64(w.bytes), CurrentStream()}, w.buffer->name);
      ReturnIf(b.CreateIsNull(p), b.getInt32(-1));
      b.CreateStore(p, slots[k], /*isVolatile=*/true);
      const ir::Variable* data = w.buffer->data.node();
      vars_[data] = p;
      frame_[data] = {slots[k], ptr()};
    }
    EmitStmt(stmts[i]);
    for (size_t k = 0; k < own_workspaces_.size(); ++k) {
      const ArenaPlan::Own& w = own_workspaces_[k];
      if (w.last != i) continue;
      // Cleared before the free: a failing free returns through the unwind, which must not
      // free it again.
      llvm::Value* p = b.CreateLoad(ptr(), slots[k], /*isVolatile=*/true);
      b.CreateStore(null, slots[k], /*isVolatile=*/true);
      vars_.erase(w.buffer->data.node());
      frame_.erase(w.buffer->data.node());
      ReturnIfNonzero(b.CreateCall(free_fn, {device, p, CurrentStream()}));
    }
    ReleaseInputsAfter(i);
  }
  AllocateOutputsBefore(-1);
  if (slots.empty()) return;
  CloseUnwind([&] {
    for (llvm::AllocaInst* slot : slots) {
      b.CreateCall(free_fn,
                   {device, b.CreateLoad(ptr(), slot, /*isVolatile=*/true), CurrentStream()});
    }
  });
}

void CodeGenLLVM::AllocateOutputsBefore(int at) {
  auto& b = *builder_;
  auto alloc_output =
      RuntimeFunction("cinn_like_alloc_output", ptr(), {ptr(), ptr(), i32(), ptr()});
  for (size_t k = 0; k < entry_outputs_.size() && status_.ok(); ++k) {
    if (output_first_use_[k] != at) continue;
    const ir::BufferNode* buf = entry_outputs_[k].buffer;
    const ir::Variable* data = buf->data.node();
    const FrameSlot& slot = frame_.at(data);  // its entry in the checked data array
    auto* allocate = llvm::BasicBlock::Create(*context_, buf->name + ".allocate", function_);
    auto* done = llvm::BasicBlock::Create(*context_, buf->name + ".allocated", function_);
    b.CreateCondBr(b.CreateIsNull(b.CreateLoad(ptr(), slot.address, /*isVolatile=*/true)), allocate,
                   done);
    b.SetInsertPoint(allocate);
    llvm::Value* p = b.CreateCall(
        alloc_output,
        {entry_name_, b.CreateLoad(ptr(), entry_args_slot_, /*isVolatile=*/true, "args"),
         b.getInt32(entry_outputs_[k].index), ConstString(buf->name)});
    ReturnIf(b.CreateIsNull(p), b.getInt32(-1));
    b.CreateStore(p, slot.address, /*isVolatile=*/true);
    b.CreateBr(done);
    b.SetInsertPoint(done);
    vars_[data] = EntryValue(data);
  }
}

void CodeGenLLVM::ReleaseInputsAfter(int at) {
  auto release = RuntimeFunction("cinn_like_release_input", builder_->getVoidTy(), {i32()});
  for (size_t k = 0; k < entry_inputs_.size(); ++k) {
    if (input_last_use_[k] != at) continue;
    builder_->CreateCall(release, {builder_->getInt32(entry_inputs_[k].index)});
  }
}

void CodeGenLLVM::EmitAllocate(const ir::Allocate* op) {
  auto& b = *builder_;
  const ir::Buffer& buf = op->buffer;
  if (function_ == entry_ &&
      std::any_of(own_workspaces_.begin(), own_workspaces_.end(),
                  [&](const ArenaPlan::Own& w) { return w.buffer == buf.get(); })) {
    EmitStmt(op->body);  // allocated around its statements (EmitEntryStatements)
    return;
  }
  constexpr int64_t kMaxStackBytes = 64 * 1024;
  const ConstantSize known = SizeOf(buf);
  llvm::Type* elem = MemoryType(buf->dtype);
  // The stack for small constant buffers of the CPU: local ones, and global ones inside a
  // loop (compute_at regions). The function's own intermediates (global, at the top level),
  // everything of variable size and every device buffer are workspaces from the runtime's
  // allocation hook.
  bool global = buf->scope == ir::MemoryScope::kGlobal;
  bool on_stack = DeviceType() == kDLCPU && known.constant && !known.absurd &&
                  (!global || (loop_depth_ > 0 && known.bytes <= kMaxStackBytes));
  if (on_stack) {
    llvm::AllocaInst* a =
        EntryAlloca(elem, b.getInt64(std::max<int64_t>(known.elems, 1)), buf->name);
    a->setAlignment(llvm::Align(64));
    vars_[buf->data.node()] = a;
    EmitStmt(op->body);
    vars_.erase(buf->data.node());
    return;
  }
  // Saturated to SIZE_MAX on overflow, which the allocator then refuses with a message naming it.
  llvm::Value* size = EmitBufferBytes(buf);
  auto alloc_fn = RuntimeFunction("cinn_like_alloc_workspace", ptr(), {i32(), i64(), ptr()});
  auto free_fn = RuntimeFunction("cinn_like_free_workspace", i32(), {i32(), ptr(), ptr()});
  llvm::Value* device = b.getInt32(DeviceType());
  llvm::Value* stream = CurrentStream();
  auto in_arena = function_ == entry_ ? arena_offsets_.find(buf.get()) : arena_offsets_.end();
  if (in_arena != arena_offsets_.end()) {
    // A buffer of the entry's arena: the outermost one allocates it (and frees it after its
    // body, where every other arena buffer's scope ends); each is its offset in it.
    const bool outermost = arena_slot_ == nullptr;
    auto load_arena = [&] {
      return b.CreateLoad(ptr(), arena_slot_, /*isVolatile=*/true, "arena");
    };
    if (outermost) {
      llvm::Value* arena =
          b.CreateCall(alloc_fn, {device, b.getInt64(arena_bytes_), stream}, "arena");
      ReturnIf(b.CreateIsNull(arena), b.getInt32(-1));
      arena_slot_ = EntryAlloca(ptr(), nullptr, "arena.slot");
      b.CreateStore(arena, arena_slot_, /*isVolatile=*/true);
      OpenUnwind("arena.unwind");
    }
    const ir::Variable* data = buf->data.node();
    llvm::Value* p =
        b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), load_arena(), in_arena->second, buf->name);
    vars_[data] = p;
    KeepInFrame(data, p);
    EmitStmt(op->body);
    vars_.erase(data);
    frame_.erase(data);
    if (outermost) {
      CloseUnwind([&] { b.CreateCall(free_fn, {device, load_arena(), stream}); });
      ReturnIfNonzero(b.CreateCall(free_fn, {device, load_arena(), stream}));
      arena_slot_ = nullptr;
    }
    return;
  }
  llvm::Value* p = b.CreateCall(alloc_fn, {device, size, stream}, buf->name);
  llvm::Value* failed = b.CreateIsNull(p);
  if (function_->getReturnType()->isIntegerTy(32)) {
    // The entry: a failed allocation returns -1 (the runtime named the bytes), freeing the
    // enclosing workspaces; so does any failure inside the body.
    ReturnIf(failed, b.getInt32(-1));
    const ir::Variable* data = buf->data.node();
    vars_[data] = p;
    if (function_ == entry_) KeepInFrame(data, p);
    OpenUnwind(buf->name + ".unwind");
    EmitStmt(op->body);
    // The error stays the one being returned: a failing free would overwrite its message.
    CloseUnwind([&] { b.CreateCall(free_fn, {device, EntryValue(data), stream}); });
    ReturnIfNonzero(b.CreateCall(free_fn, {device, EntryValue(data), stream}));
    vars_.erase(data);
    frame_.erase(data);
    return;
  }
  // Inside a parallel loop's outlined body, which cannot return an error: the body is skipped
  // when the allocation fails (the message is in that thread's last error).
  auto* body_bb = llvm::BasicBlock::Create(*context_, buf->name + ".allocated", function_);
  auto* end_bb = llvm::BasicBlock::Create(*context_, buf->name + ".end", function_);
  b.CreateCondBr(failed, end_bb, body_bb);
  b.SetInsertPoint(body_bb);
  vars_[buf->data.node()] = p;
  EmitStmt(op->body);
  vars_.erase(buf->data.node());
  b.CreateCall(free_fn, {device, p, stream});
  b.CreateBr(end_bb);
  b.SetInsertPoint(end_bb);
}

}  // namespace cinn_like::backends
