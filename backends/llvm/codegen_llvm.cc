/// \file Host LLVM IR generation: module set-up and the entry prologue (argument checks,
/// symbolic dims). Expressions are in codegen_llvm_expr.cc, statements in codegen_llvm_stmt.cc.
#include "backends/llvm/codegen_llvm.h"

#include <dlpack/dlpack.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <climits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/llvm/arena_plan.h"
#include "ir/compile_options.h"
#include "ir/flags.h"
#include "ir/printer.h"
#include "ir/substitute.h"
#include "ir/tensor.h"
#include "ir/visitor.h"

namespace cinn_like::backends {

namespace {

// DLPack 0.6 has no bool code; newer DLPack (and PyTorch) use kDLBool = 6 with 8 bits.
constexpr int32_t kDLBoolCode = 6;

int32_t DLPackCode(const ir::Type& t) {
  if (t.is_int()) return kDLInt;
  if (t.is_uint()) return kDLUInt;
  if (t.is_bfloat16()) return kDLBfloat;
  if (t.is_float()) return kDLFloat;
  return kDLBoolCode;
}

}  // namespace

std::string LLVMModule::ToString() const {
  if (!module) return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  os.flush();
  return text;
}

CodeGenLLVM::CodeGenLLVM(std::string triple, std::string data_layout)
    : triple_(std::move(triple)), data_layout_(std::move(data_layout)) {}

CodeGenLLVM::~CodeGenLLVM() = default;

int32_t CodeGenLLVM::DeviceType() const { return kDLCPU; }

llvm::Value* CodeGenLLVM::EmitIntrinsicCall(const ir::Call* op) {
  switch (*op->intrinsic) {
    case ir::IntrinsicOp::kVectorReduceSum:
    case ir::IntrinsicOp::kVectorReduceMax:
    case ir::IntrinsicOp::kVectorReduceMin:
    case ir::IntrinsicOp::kVectorReduceProd:
      return EmitVectorReduce(op);
    case ir::IntrinsicOp::kExternCall:
      return EmitExternCall(op);
    case ir::IntrinsicOp::kPhiloxUniform:
      return EmitPhiloxUniform(op);
    case ir::IntrinsicOp::kReduceSum:  // markers never reach lowering
    case ir::IntrinsicOp::kReduceMax:
    case ir::IntrinsicOp::kReduceMin:
    case ir::IntrinsicOp::kReduceProd:
    case ir::IntrinsicOp::kBlockReduceSum:  // GPU device code
    case ir::IntrinsicOp::kBlockReduceMax:
    case ir::IntrinsicOp::kBlockReduceMin:
    case ir::IntrinsicOp::kBlockReduceProd:
    case ir::IntrinsicOp::kSyncThreads:
    case ir::IntrinsicOp::kThreadIndex:
    case ir::IntrinsicOp::kLaunchKernel:  // CodeGenCudaHost
      break;
  }
  return Fail(absl::UnimplementedError(
                  absl::StrCat("intrinsic call '", op->name, "' is not supported by this target")),
              op->type.is_void() ? nullptr : LLVMType(op->type));
}

llvm::Value* CodeGenLLVM::EmitExternCall(const ir::Call* op) {
  auto* callee = op->args.empty() ? nullptr : op->args[0].As<ir::StringImm>();
  if (!callee) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat(op->name, " needs the runtime function's name first")));
  }
  auto& b = builder();
  std::vector<llvm::Type*> params;
  std::vector<llvm::Value*> values;
  for (size_t k = 1; k < op->args.size(); ++k) {
    const ir::Expr& e = op->args[k];
    if (e.type().is_vector()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "extern call ", callee->value, ": argument ", k, " is a vector ", e.type().ToString())));
    }
    llvm::Value* v = EmitExpr(e);
    if (e.type().is_handle() || e.type().is_string()) {  // a string: its constant's address
      params.push_back(ptr());
    } else if (e.type().is_float()) {
      v = CastValue(v, e.type(), ir::Float(64));
      params.push_back(b.getDoubleTy());
    } else {
      v = b.CreateIntCast(v, i64(), e.type().is_int());
      params.push_back(i64());
    }
    values.push_back(v);
  }
  params.push_back(ptr());
  values.push_back(CurrentStream());
  llvm::Value* rc = b.CreateCall(RuntimeFunction(callee->value, i32(), params), values);
  if (function()->getReturnType()->isIntegerTy(32)) ReturnIfNonzero(rc);
  return rc;
}

llvm::Value* CodeGenLLVM::Fail(absl::Status status, llvm::Type* placeholder_type) {
  if (status_.ok()) status_ = std::move(status);
  // Never null: callers go on building instructions until the function is abandoned.
  if (!placeholder_type || placeholder_type->isVoidTy()) {
    placeholder_type = llvm::Type::getInt32Ty(*context_);
  }
  return llvm::PoisonValue::get(placeholder_type);
}

llvm::Type* CodeGenLLVM::LLVMType(const ir::Type& t) const {
  llvm::LLVMContext& c = *context_;
  llvm::Type* elem = nullptr;
  switch (t.code()) {
    case ir::Type::Code::kInt:
    case ir::Type::Code::kUInt:
      elem = llvm::Type::getIntNTy(c, t.bits());
      break;
    case ir::Type::Code::kBool:
      elem = llvm::Type::getInt1Ty(c);
      break;
    case ir::Type::Code::kBFloat:
      elem = llvm::Type::getBFloatTy(c);
      break;
    case ir::Type::Code::kFloat:
      elem = t.bits() == 16   ? llvm::Type::getHalfTy(c)
             : t.bits() == 64 ? llvm::Type::getDoubleTy(c)
                              : llvm::Type::getFloatTy(c);
      break;
    case ir::Type::Code::kHandle:
    case ir::Type::Code::kString:
      elem = llvm::PointerType::get(c, 0);
      break;
    case ir::Type::Code::kVoid:
      return llvm::Type::getVoidTy(c);
  }
  if (t.lanes() > 1) return llvm::FixedVectorType::get(elem, t.lanes());
  return elem;
}

llvm::Type* CodeGenLLVM::MemoryType(const ir::Type& t) const {
  if (!t.is_bool()) return LLVMType(t);
  llvm::Type* i8 = llvm::Type::getInt8Ty(*context_);
  return t.lanes() > 1 ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(i8, t.lanes())) : i8;
}

llvm::FunctionCallee CodeGenLLVM::RuntimeFunction(const std::string& name, llvm::Type* ret,
                                                  std::vector<llvm::Type*> params) {
  return module_->getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
}

llvm::Value* CodeGenLLVM::ConstString(const std::string& s) {
  std::string key = ".str." + s;
  if (auto* g = module_->getNamedGlobal(key)) return g;
  auto* init = llvm::ConstantDataArray::getString(*context_, s);
  auto* g = new llvm::GlobalVariable(*module_, init->getType(), true,
                                     llvm::GlobalValue::PrivateLinkage, init, key);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  g->setAlignment(llvm::Align(1));
  return g;
}

void CodeGenLLVM::ReturnIfNonzero(llvm::Value* code) {
  ReturnIf(builder_->CreateICmpNE(code, builder_->getInt32(0)), code);
}

void CodeGenLLVM::ReturnIf(llvm::Value* failed, llvm::Value* code) {
  auto& b = *builder_;
  if (unwinds_.empty()) {
    Fail(absl::InternalError("an error check outside an entry's unwind scope"));
    return;
  }
  auto* ok = llvm::BasicBlock::Create(*context_, "check_ok", function_);
  llvm::MDBuilder md(*context_);
  Unwind& target = unwinds_.back();
  b.CreateStore(code, target.code);
  target.used = true;
  b.CreateCondBr(failed, target.block, ok, md.createUnlikelyBranchWeights());
  b.SetInsertPoint(ok);
}

void CodeGenLLVM::OpenUnwind(const std::string& name) {
  auto* block = llvm::BasicBlock::Create(*context_, name, function_);
  unwinds_.push_back({block, EntryAlloca(i32(), nullptr, name + ".code")});
}

void CodeGenLLVM::CloseUnwind(const std::function<void()>& cleanup) {
  Unwind top = unwinds_.back();
  unwinds_.pop_back();
  if (!top.used) {
    top.block->eraseFromParent();
    top.code->eraseFromParent();
    return;
  }
  llvm::IRBuilderBase::InsertPoint saved = builder_->saveIP();
  builder_->SetInsertPoint(top.block);
  llvm::Value* code = builder_->CreateLoad(i32(), top.code, top.block->getName() + ".code");
  cleanup();
  if (unwinds_.empty()) {
    builder_->CreateRet(code);
  } else {
    builder_->CreateStore(code, unwinds_.back().code);
    unwinds_.back().used = true;
    builder_->CreateBr(unwinds_.back().block);
  }
  builder_->restoreIP(saved);
}

void CodeGenLLVM::KeepInFrame(const ir::Variable* v, llvm::Value* value) {
  llvm::AllocaInst* slot = EntryAlloca(value->getType(), nullptr, v->name + ".slot");
  builder_->CreateStore(value, slot, /*isVolatile=*/true);
  frame_[v] = {slot, value->getType()};
}

llvm::Value* CodeGenLLVM::EntryValue(const ir::Variable* v) {
  auto slot = frame_.find(v);
  if (function_ != entry_ || slot == frame_.end()) return vars_.at(v);
  return builder_->CreateLoad(slot->second.type, slot->second.address, /*isVolatile=*/true,
                              v->name);
}

CodeGenLLVM::ConstantSize CodeGenLLVM::SizeOf(const ir::Buffer& buf) {
  ConstantSize size;
  for (const ir::Expr& d : buf->shape) {
    const int64_t* c = ir::AsConstInt(d);
    if (!c) {
      size.constant = false;
    } else {
      size.absurd |= *c < 0 || __builtin_mul_overflow(size.elems, *c, &size.elems);
    }
  }
  size.absurd |= __builtin_mul_overflow(size.elems, int64_t{buf->dtype.bytes()}, &size.bytes);
  return size;
}

llvm::Value* CodeGenLLVM::EmitWideSize(const ir::Expr& e, llvm::Value** overflow) {
  auto& b = *builder_;
  auto checked = [&](llvm::Intrinsic::ID id, const ir::Expr& x, const ir::Expr& y) -> llvm::Value* {
    llvm::Value* l = EmitWideSize(x, overflow);
    llvm::Value* r = l ? EmitWideSize(y, overflow) : nullptr;
    if (!r) return nullptr;
    llvm::Value* both = b.CreateBinaryIntrinsic(id, l, r);
    *overflow = b.CreateOr(*overflow, b.CreateExtractValue(both, 1));
    return b.CreateExtractValue(both, 0);
  };
  if (e.type().is_int() || e.type().is_uint()) {
    if (auto* add = e.As<ir::Add>()) {
      return checked(llvm::Intrinsic::sadd_with_overflow, add->a, add->b);
    }
    if (auto* sub = e.As<ir::Sub>()) {
      return checked(llvm::Intrinsic::ssub_with_overflow, sub->a, sub->b);
    }
    if (auto* mul = e.As<ir::Mul>()) {
      return checked(llvm::Intrinsic::smul_with_overflow, mul->a, mul->b);
    }
    if (auto* cast = e.As<ir::Cast>();
        cast && (cast->value.type().is_int() || cast->value.type().is_uint())) {
      return EmitWideSize(cast->value, overflow);
    }
  }
  llvm::Value* v = EmitExpr(e);
  if (!v) return nullptr;
  return b.CreateIntCast(v, i64(), !e.type().is_uint());
}

void CodeGenLLVM::CheckSizeFits(llvm::Value* fname, const std::string& what, const ir::Expr& e,
                                int64_t max) {
  auto& b = *builder_;
  llvm::Value* overflow = b.getFalse();
  llvm::Value* wide = EmitWideSize(e, &overflow);
  if (!wide) return;
  llvm::Value* fits = b.CreateAnd(
      b.CreateNot(overflow),
      b.CreateAnd(b.CreateICmpSGE(wide, b.getInt64(0)), b.CreateICmpSLE(wide, b.getInt64(max))));
  auto check =
      RuntimeFunction("cinn_like_check_size_fits", i32(), {ptr(), ptr(), i32(), i64(), i64()});
  ReturnIfNonzero(b.CreateCall(
      check, {fname, ConstString(what), b.CreateZExt(fits, i32()), wide, b.getInt64(max)}));
}

void CodeGenLLVM::PlanArena(const ir::Stmt& body) {
  arena_slot_ = nullptr;
  std::vector<const ir::Variable*> outputs, inputs;
  for (const EntryArg& o : entry_outputs_) outputs.push_back(o.buffer->data.node());
  for (const EntryArg& i : entry_inputs_) inputs.push_back(i.buffer->data.node());
  // 256 bytes: a CUDA allocation's alignment, and more than any vector load needs.
  constexpr int64_t kAlign = 256;
  constexpr int64_t kMaxBytes = int64_t{1} << 46;
  // From 8 MiB a workspace is allocated for its own live range: few enough allocations per
  // call (a training step's logits gradient, a CNN's first feature maps), and it is the large
  // ones that the arena would hold long after their last use.
  constexpr int64_t kOwnBytes = int64_t{8} << 20;
  // Of variable or absurd size: a workspace of its own for the whole body (refused by the
  // allocator if absurd).
  ArenaPlan plan = backends::PlanArena(
      body, kAlign,
      [&](const ir::Buffer& buf) -> int64_t {
        ConstantSize size = SizeOf(buf);
        if (buf->scope != ir::MemoryScope::kGlobal || !size.constant || size.absurd ||
            size.bytes > kMaxBytes) {
          return -1;
        }
        return size.bytes;
      },
      kOwnBytes, outputs, inputs);
  arena_offsets_ = std::move(plan.offsets);
  arena_bytes_ = plan.bytes;
  own_workspaces_ = std::move(plan.own);
  entry_statements_ = plan.statements;
  output_first_use_ = std::move(plan.output_first_use);
  input_last_use_ = std::move(plan.input_last_use);
}

llvm::Value* CodeGenLLVM::CurrentStream() {
  if (stream_ && function_ == llvm::cast<llvm::Argument>(stream_)->getParent()) return stream_;
  return llvm::ConstantPointerNull::get(builder_->getPtrTy());
}

llvm::AllocaInst* CodeGenLLVM::EntryAlloca(llvm::Type* type, llvm::Value* count,
                                           const std::string& name) {
  llvm::BasicBlock& entry = function_->getEntryBlock();
  llvm::IRBuilder<> b(&entry, entry.getFirstInsertionPt());
  return b.CreateAlloca(type, count, name);
}

absl::StatusOr<LLVMModule> CodeGenLLVM::Compile(const ir::Module& module) {
  context_ = std::make_unique<llvm::LLVMContext>();
  module_ = std::make_unique<llvm::Module>(module.name.empty() ? "module" : module.name, *context_);
  module_->setTargetTriple(triple_);
  if (!data_layout_.empty()) module_->setDataLayout(data_layout_);
  builder_ = std::make_unique<llvm::IRBuilder<>>(*context_);
  // Fast math: every float operation and math call the builder makes carries the fast flags
  // (reassociation, contraction, no NaN/inf, approximate functions).
  if (ir::CurrentCompileOptions().fast_math)
    builder_->setFastMathFlags(llvm::FastMathFlags::getFast());
  status_ = absl::OkStatus();
  outlined_.clear();
  for (auto& f : module.functions) {
    if (f->kind != ir::LoweredFuncNode::Kind::kHostEntry) {
      return absl::InvalidArgumentError(
          absl::StrCat("function ", f->name, " of module ", module.name,
                       " is a device kernel: host code generation takes host entries only"));
    }
    EmitHostEntry(*f);
    if (!status_.ok()) {
      return absl::Status(status_.code(),
                          absl::StrCat("in function ", f->name, ": ", status_.message()));
    }
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*module_, &os)) {
    os.flush();
    return absl::InternalError(
        absl::StrCat("generated LLVM IR of module ", module.name, " is invalid: ", errors));
  }
  builder_.reset();
  LLVMModule out;
  out.context = std::move(context_);
  out.module = std::move(module_);
  return out;
}

std::string EntrySymbol(const std::string& name) { return "cinn_like.entry." + name; }

void CodeGenLLVM::ReturnIfOutputsEmpty(const std::vector<const ir::Argument*>& buffers) {
  // Every output empty (a zero dim): nothing to write, so the call returns before any loop,
  // which would still walk the other dims (an output of 2147483647 x 0 took minutes; found by
  // fuzz_c_api_call). Outputs are the only memory an entry writes that a caller sees.
  auto& b = *builder_;
  llvm::Value* all_empty = nullptr;
  for (const ir::Argument* a : buffers) {
    if (a->kind != ir::Argument::Kind::kOutput) continue;
    llvm::Value* empty = b.getFalse();
    for (const ir::Expr& d : a->buffer->shape) {
      llvm::Value* v = b.CreateIntCast(EmitExpr(d), i64(), true);
      empty = b.CreateOr(empty, b.CreateICmpEQ(v, b.getInt64(0)));
    }
    all_empty = all_empty ? b.CreateAnd(all_empty, empty) : empty;
  }
  if (!all_empty || !status_.ok()) return;
  auto* done = llvm::BasicBlock::Create(*context_, "outputs_empty", function_);
  auto* work = llvm::BasicBlock::Create(*context_, "outputs_nonempty", function_);
  b.CreateCondBr(all_empty, done, work);
  b.SetInsertPoint(done);
  b.CreateRet(b.getInt32(0));
  b.SetInsertPoint(work);
}

void CodeGenLLVM::EmitHostEntry(const ir::LoweredFuncNode& func) {
  auto& b = *builder_;
  func_name_ = func.name;
  vars_.clear();
  frame_.clear();
  closures_.clear();
  unwinds_.clear();
  loop_depth_ = 0;
  parallel_count_ = 0;
  auto* fty = llvm::FunctionType::get(i32(), {ptr(), i32(), ptr()}, false);
  if (module_->getFunction(EntrySymbol(func.name))) {
    Fail(absl::InvalidArgumentError(absl::StrCat("duplicate function name ", func.name)));
    return;
  }
  function_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, EntrySymbol(func.name),
                                     *module_);
  entry_ = function_;
  // The entry is glue (argument checks, workspaces, one call per loop nest, each check of a
  // returned code a branch): LLVM's optimizer and its O3 code generator (block placement,
  // domain reassignment) take time superlinear in the number of its blocks, and its speed does
  // not matter; the nests it calls are optimized.
  function_->addFnAttr(llvm::Attribute::OptimizeNone);
  function_->addFnAttr(llvm::Attribute::NoInline);
  nest_count_ = 0;
  llvm::Value* args = function_->getArg(0);
  llvm::Value* num_args = function_->getArg(1);
  stream_ = function_->getArg(2);
  args->setName("args");
  num_args->setName("num_args");
  stream_->setName("stream");
  b.SetInsertPoint(llvm::BasicBlock::Create(*context_, "entry", function_));
  OpenUnwind("return_error");

  std::vector<const ir::Argument*> buffers;
  for (auto& a : func.args) {
    if (!a.is_buffer()) {
      Fail(absl::UnimplementedError(
          absl::StrCat("scalar argument ", a.name(),
                       " of a host entry: the calling convention passes tensors only")));
      return;
    }
    buffers.push_back(&a);
  }
  llvm::Value* fname = ConstString(func.name);
  // The count and the array itself, before any argument is read.
  auto check_args = RuntimeFunction("cinn_like_check_args", i32(), {ptr(), ptr(), i32(), i32()});
  ReturnIfNonzero(b.CreateCall(
      check_args, {fname, args, num_args, b.getInt32(static_cast<int>(buffers.size()))}));
  // The argument array, read from the frame at each use (as KeepInFrame's values are): one value
  // used once per argument and live across every check made LLVM's spill weights quadratic.
  llvm::AllocaInst* args_slot = EntryAlloca(ptr(), nullptr, "args.slot");
  b.CreateStore(args, args_slot, /*isVolatile=*/true);
  auto args_now = [&] { return b.CreateLoad(ptr(), args_slot, /*isVolatile=*/true, "args"); };

  auto tensor_dim = RuntimeFunction("cinn_like_tensor_dim", i64(), {ptr(), i32()});
  auto check_range =
      RuntimeFunction("cinn_like_check_index_range", i32(), {ptr(), ptr(), i32(), i64()});
  auto check_symbolic_dim = RuntimeFunction("cinn_like_check_symbolic_dim", i32(),
                                            {ptr(), ptr(), i32(), i64(), i64(), ptr()});
  auto check_size_range = RuntimeFunction("cinn_like_check_size_range", i32(),
                                          {ptr(), ptr(), i32(), i64(), ptr(), i64(), i64(), ptr()});
  // Each symbolic dim's variable and the dim that binds it ("x dim 0"), in binding order.
  std::vector<std::pair<const ir::Variable*, std::string>> bound_by;
  struct DeferredDim {
    size_t arg;
    llvm::Value* tensor_name;
    int dim;
    ir::Expr expected;  // symbolic: checked once every symbol is bound, the dim read again
  };
  std::vector<DeferredDim> deferred;
  // Every argument's tensor checks and constant dims in one runtime call over a table of what
  // each must be: a call (and its result check) per argument and dim made the entry's code, and
  // LLVM's register allocation over it, grow with the square of the arguments (5,000
  // arguments: about a minute). The data pointers land in a frame array read at each use.
  const int n_args = static_cast<int>(buffers.size());
  llvm::StructType* desc_type =
      llvm::StructType::get(*context_, {ptr(), i32(), i32(), i32(), i32(), i32(), i32(), i64()});
  std::vector<llvm::Constant*> descs;
  std::vector<int64_t> const_dims;
  for (const ir::Argument* a : buffers) {
    const ir::Buffer& buf = a->buffer;
    // A buffer whose shape is int64 is indexed with 64-bit integers (ir::IndexTypeScope).
    ir::Type index_type = ir::Int(32);
    for (const ir::Expr& d : buf->shape) {
      if (d.type().bits() == 64) index_type = ir::Int(64);
      const int64_t* c = ir::AsConstInt(d);
      const_dims.push_back(c ? *c : -1);
    }
    const int bits = buf->dtype.is_bool() ? 8 : buf->dtype.bits();
    const int ndim = static_cast<int>(buf->shape.size());
    descs.push_back(llvm::ConstantStruct::get(
        desc_type,
        {llvm::cast<llvm::Constant>(ConstString(buf->name)), b.getInt32(DLPackCode(buf->dtype)),
         b.getInt32(bits), b.getInt32(ndim), b.getInt32(a->rank_zero ? 0 : ndim),
         b.getInt32(DeviceType()), b.getInt32(a->kind == ir::Argument::Kind::kOutput ? 1 : 0),
         b.getInt64(ir::MaxIndexedElements(index_type))}));
  }
  auto table = [&](llvm::Constant* init, const std::string& name) {
    auto* g = new llvm::GlobalVariable(*module_, init->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::PrivateLinkage, init, name);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  };
  llvm::Value* desc_table =
      table(llvm::ConstantArray::get(llvm::ArrayType::get(desc_type, descs.size()), descs),
            func.name + ".arguments");
  llvm::Value* dims_table = table(
      llvm::ConstantDataArray::get(
          *context_, llvm::ArrayRef<uint64_t>(reinterpret_cast<const uint64_t*>(const_dims.data()),
                                              const_dims.size())),
      func.name + ".dims");
  llvm::Value* data_array = EntryAlloca(ptr(), b.getInt32(std::max(n_args, 1)), "arguments.data");
  auto check_arguments = RuntimeFunction("cinn_like_check_arguments", i32(),
                                         {ptr(), ptr(), i32(), ptr(), ptr(), ptr()});
  ReturnIfNonzero(b.CreateCall(check_arguments, {fname, args_now(), b.getInt32(n_args), desc_table,
                                                 dims_table, data_array}));
  for (int i = 0; i < n_args; ++i) {
    const ir::Variable* data = buffers[i]->buffer->data.node();
    frame_[data] = {b.CreateInBoundsGEP(ptr(), data_array, b.getInt32(i)), ptr()};
    vars_[data] = EntryValue(data);
  }
  // Symbolic dims: each symbol bound from the first dim that is the symbol alone (its range
  // checked), the others checked once every symbol is bound.
  for (size_t i = 0; i < buffers.size(); ++i) {
    const ir::Buffer& buf = buffers[i]->buffer;
    llvm::Value* bname = nullptr;
    llvm::Value* t = nullptr;
    for (size_t d = 0; d < buf->shape.size(); ++d) {
      const ir::Expr& e = buf->shape[d];
      if (ir::AsConstInt(e)) continue;
      if (!bname) {
        bname = ConstString(buf->name);
        llvm::Value* slot = b.CreateInBoundsGEP(ptr(), args_now(), b.getInt32(static_cast<int>(i)));
        t = b.CreateLoad(ptr(), slot, buf->name + ".dltensor");
      }
      auto* v = e.As<ir::Variable>();
      if (v && !vars_.count(v)) {
        llvm::Value* dim = b.CreateCall(tensor_dim, {t, b.getInt32(static_cast<int>(d))},
                                        absl::StrCat(buf->name, ".dim", d));
        ReturnIfNonzero(
            b.CreateCall(check_range, {fname, bname, b.getInt32(static_cast<int>(d)), dim}));
        vars_[v] = b.CreateIntCast(dim, LLVMType(e.type()), true, v->name);
        KeepInFrame(v, vars_[v]);
        bound_by.emplace_back(v, absl::StrCat(buf->name, " dim ", d));
        auto range = func.size_symbols.find(v->name);
        if (range != func.size_symbols.end() &&
            (range->second.min > 0 || range->second.max < INT32_MAX)) {
          ReturnIfNonzero(b.CreateCall(
              check_size_range, {fname, bname, b.getInt32(static_cast<int>(d)), dim,
                                 ConstString(range->second.symbol), b.getInt64(range->second.min),
                                 b.getInt64(range->second.max), ConstString(range->second.why)}));
        }
      } else {
        deferred.push_back({i, bname, static_cast<int>(d), e});
      }
    }
  }
  // Every symbolic size in 64 bits without wrapping, within what the index type addresses,
  // before a dim is compared with it or a workspace sized by it: the dims of the arguments,
  // then the elements of each temporary.
  auto from_symbols = [&](const ir::Expr& e) {
    std::string from;
    for (const auto& [var, where] : bound_by) {
      if (ir::UsesVar(e, var))
        absl::StrAppend(&from, from.empty() ? "" : ", ", var->name, " from ", where);
    }
    return from.empty() ? ir::ToString(e) : absl::StrCat(ir::ToString(e), " (", from, ")");
  };
  for (auto& d : deferred) {
    const ir::Buffer& buf = buffers[d.arg]->buffer;
    CheckSizeFits(
        fname, absl::StrCat("tensor ", buf->name, " dim ", d.dim, " = ", from_symbols(d.expected)),
        d.expected, ir::MaxIndexedElements(d.expected.type()));
    if (!status_.ok()) return;
  }
  for (ir::Stmt s = func.body; auto* alloc = s.As<ir::Allocate>(); s = alloc->body) {
    const ir::Buffer& buf = alloc->buffer;
    if (buf->scope != ir::MemoryScope::kGlobal || SizeOf(buf).constant) continue;
    ir::Expr elements;
    ir::Type index_type = ir::Int(32);
    for (const ir::Expr& d : buf->shape) {
      ir::Expr wide = ir::Cast::Make(ir::Int(64), d);
      elements = elements.defined() ? ir::Expr(ir::Mul::Make(elements, wide)) : wide;
      if (d.type().bits() == 64) index_type = ir::Int(64);
    }
    if (!elements.defined()) continue;
    CheckSizeFits(
        fname, absl::StrCat("the elements of temporary ", buf->name, " = ", from_symbols(elements)),
        elements, ir::MaxIndexedElements(index_type));
    if (!status_.ok()) return;
  }
  for (auto& d : deferred) {
    llvm::Value* expected = EmitExpr(d.expected);
    if (!status_.ok()) return;
    expected = b.CreateIntCast(expected, i64(), !d.expected.type().is_uint());
    llvm::Value* slot = b.CreateInBoundsGEP(ptr(), args_now(), b.getInt32(static_cast<int>(d.arg)));
    llvm::Value* got = b.CreateCall(tensor_dim, {b.CreateLoad(ptr(), slot), b.getInt32(d.dim)});
    // A symbolic size: the message says which dims bound its symbols.
    std::string what = ir::ToString(d.expected), from;
    for (const auto& [var, where] : bound_by) {
      if (ir::UsesVar(d.expected, var))
        absl::StrAppend(&from, from.empty() ? "" : ", ", var->name, " from ", where);
    }
    ReturnIfNonzero(
        b.CreateCall(check_symbolic_dim,
                     {fname, d.tensor_name, b.getInt32(d.dim), got, expected,
                      ConstString(from.empty() ? what : absl::StrCat(what, " (", from, ")"))}));
  }
  // An output sharing memory with another argument (a transpose in place) would read what it
  // has overwritten: refused, naming both.
  std::string outputs, names;
  for (const ir::Argument* a : buffers) {
    outputs += a->kind == ir::Argument::Kind::kOutput ? '1' : '0';
    absl::StrAppend(&names, names.empty() ? "" : ",", a->buffer->name);
  }
  auto check_overlap =
      RuntimeFunction("cinn_like_check_overlap", i32(), {ptr(), ptr(), i32(), ptr(), ptr()});
  ReturnIfNonzero(
      b.CreateCall(check_overlap, {fname, args_now(), b.getInt32(static_cast<int>(buffers.size())),
                                   ConstString(outputs), ConstString(names)}));
  ReturnIfOutputsEmpty(buffers);
  entry_outputs_.clear();
  entry_inputs_.clear();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const EntryArg arg{static_cast<int>(i), buffers[i]->buffer.get()};
    if (buffers[i]->kind == ir::Argument::Kind::kOutput) {
      entry_outputs_.push_back(arg);
    } else if (ReleasesInputs()) {
      // Handing back a small input frees too little to be worth a call to the caller's hook
      // (a backward has hundreds: a Python callback each).
      constexpr int64_t kMinReleaseBytes = 64 << 10;
      const ConstantSize size = SizeOf(buffers[i]->buffer);
      if (!size.constant || size.absurd || size.bytes >= kMinReleaseBytes) {
        entry_inputs_.push_back(arg);
      }
    }
  }
  entry_name_ = fname;
  entry_args_slot_ = args_slot;
  PlanArena(func.body);
  EmitStmt(func.body);
  b.CreateRet(b.getInt32(0));
  CloseUnwind([] {});
  entry_ = nullptr;
}

}  // namespace cinn_like::backends
