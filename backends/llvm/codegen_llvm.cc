/// \file Host LLVM IR generation: the entry prologue (argument checks, symbolic dims) and the
/// translation of every IR node.
#include "backends/llvm/codegen_llvm.h"

#include <dlpack/dlpack.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace cinn_like::backends {

namespace {

// DLPack 0.6 has no bool code; newer DLPack (and PyTorch) use kDLBool = 6 with 8 bits.
constexpr int32_t kDLBoolCode = 6;

int32_t DLPackCode(const ir::Type& t) {
  if (t.is_int()) return kDLInt;
  if (t.is_uint()) return kDLUInt;
  if (t.is_float()) return kDLFloat;
  return kDLBoolCode;
}

// The variables a statement reads that it does not define itself (loop indices and allocated
// buffers inside it are defined there), buffer base addresses included, in first-use order.
class FreeVars : public ir::IRVisitor {
 public:
  std::vector<const ir::Variable*> vars;
  std::map<const ir::Variable*, ir::Expr> exprs;
  std::set<const ir::Variable*> defined;

  void Use(const ir::Expr& e) {
    auto* v = e.As<ir::Variable>();
    if (!v || defined.count(v) || exprs.count(v)) return;
    exprs[v] = e;
    vars.push_back(v);
  }

 protected:
  void VisitVariable(const ir::Variable* op) override {
    // Reached only through Visit(Expr) below, which records the handle.
  }
  void VisitLoad(const ir::Load* op) override {
    Use(op->buffer->data);
    ir::IRVisitor::VisitLoad(op);
  }
  void VisitStore(const ir::Store* op) override {
    Use(op->buffer->data);
    ir::IRVisitor::VisitStore(op);
  }
  void VisitFor(const ir::For* op) override {
    defined.insert(op->loop_var.node());
    ir::IRVisitor::VisitFor(op);
  }
  void VisitAllocate(const ir::Allocate* op) override {
    defined.insert(op->buffer->data.node());
    for (auto& d : op->buffer->shape) Visit(d);
    ir::IRVisitor::VisitAllocate(op);
  }

 public:
  using ir::IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (e.As<ir::Variable>()) Use(e);
    ir::IRVisitor::Visit(e);
  }
};

// Math functions by base name: the LLVM intrinsic when there is one, else libm.
const std::map<std::string, llvm::Intrinsic::ID>& MathIntrinsics() {
  static const auto* table = new std::map<std::string, llvm::Intrinsic::ID>{
      {"exp", llvm::Intrinsic::exp},
      {"exp2", llvm::Intrinsic::exp2},
      {"log", llvm::Intrinsic::log},
      {"log2", llvm::Intrinsic::log2},
      {"log10", llvm::Intrinsic::log10},
      {"sqrt", llvm::Intrinsic::sqrt},
      {"sin", llvm::Intrinsic::sin},
      {"cos", llvm::Intrinsic::cos},
      {"fabs", llvm::Intrinsic::fabs},
      {"abs", llvm::Intrinsic::fabs},
      {"floor", llvm::Intrinsic::floor},
      {"ceil", llvm::Intrinsic::ceil},
      {"round", llvm::Intrinsic::round},
      {"trunc", llvm::Intrinsic::trunc},
      {"pow", llvm::Intrinsic::pow},
      {"fma", llvm::Intrinsic::fma},
      {"copysign", llvm::Intrinsic::copysign},
      {"fmin", llvm::Intrinsic::minnum},
      {"fmax", llvm::Intrinsic::maxnum},
      {"rint", llvm::Intrinsic::rint},
      {"nearbyint", llvm::Intrinsic::nearbyint},
  };
  return *table;
}

const std::set<std::string>& LibmFunctions() {
  static const auto* table = new std::set<std::string>{
      "tanh",  "tan",   "erf",   "erfc",  "asin",  "acos", "atan", "atan2", "sinh",   "cosh",
      "asinh", "acosh", "atanh", "expm1", "log1p", "cbrt", "fmod", "hypot", "lgamma", "tgamma"};
  return *table;
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
  return Fail(absl::UnimplementedError(
                  absl::StrCat("intrinsic call '", op->name, "' is not supported by this target")),
              op->type.is_void() ? nullptr : LLVMType(op->type));
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
  auto& b = *builder_;
  auto* fail = llvm::BasicBlock::Create(*context_, "check_failed", function_);
  auto* ok = llvm::BasicBlock::Create(*context_, "check_ok", function_);
  llvm::MDBuilder md(*context_);
  b.CreateCondBr(b.CreateICmpNE(code, b.getInt32(0)), fail, ok, md.createUnlikelyBranchWeights());
  b.SetInsertPoint(fail);
  b.CreateRet(code);
  b.SetInsertPoint(ok);
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
  status_ = absl::OkStatus();
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

void CodeGenLLVM::EmitHostEntry(const ir::LoweredFuncNode& func) {
  auto& b = *builder_;
  func_name_ = func.name;
  vars_.clear();
  parallel_count_ = 0;
  auto* fty = llvm::FunctionType::get(i32(), {ptr(), i32(), ptr()}, false);
  if (module_->getFunction(func.name)) {
    Fail(absl::InvalidArgumentError(absl::StrCat("duplicate function name ", func.name)));
    return;
  }
  function_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, func.name, *module_);
  llvm::Value* args = function_->getArg(0);
  llvm::Value* num_args = function_->getArg(1);
  stream_ = function_->getArg(2);
  args->setName("args");
  num_args->setName("num_args");
  stream_->setName("stream");
  b.SetInsertPoint(llvm::BasicBlock::Create(*context_, "entry", function_));

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
  auto check_num_args = RuntimeFunction("cinn_like_check_num_args", i32(), {ptr(), i32(), i32()});
  ReturnIfNonzero(b.CreateCall(check_num_args,
                               {fname, num_args, b.getInt32(static_cast<int>(buffers.size()))}));

  auto check_tensor = RuntimeFunction("cinn_like_check_tensor", i32(),
                                      {ptr(), ptr(), i32(), ptr(), i32(), i32(), i32(), i32()});
  auto tensor_data = RuntimeFunction("cinn_like_tensor_data", ptr(), {ptr()});
  auto tensor_dim = RuntimeFunction("cinn_like_tensor_dim", i64(), {ptr(), i32()});
  auto check_range =
      RuntimeFunction("cinn_like_check_index_range", i32(), {ptr(), ptr(), i32(), i64()});
  auto check_dim =
      RuntimeFunction("cinn_like_check_dim", i32(), {ptr(), ptr(), i32(), i64(), i64()});
  struct DeferredDim {
    llvm::Value* tensor_name;
    int dim;
    llvm::Value* got;
    ir::Expr expected;
  };
  std::vector<DeferredDim> deferred;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const ir::Buffer& buf = buffers[i]->buffer;
    llvm::Value* slot = b.CreateInBoundsGEP(ptr(), args, b.getInt32(static_cast<int>(i)));
    llvm::Value* t = b.CreateLoad(ptr(), slot, buf->name + ".dltensor");
    llvm::Value* bname = ConstString(buf->name);
    int bits = buf->dtype.is_bool() ? 8 : buf->dtype.bits();
    ReturnIfNonzero(b.CreateCall(
        check_tensor, {fname, t, b.getInt32(static_cast<int>(i)), bname,
                       b.getInt32(DLPackCode(buf->dtype)), b.getInt32(bits),
                       b.getInt32(static_cast<int>(buf->shape.size())), b.getInt32(DeviceType())}));
    llvm::Value* data = b.CreateCall(tensor_data, {t}, buf->name);
    vars_[buf->data.node()] = data;
    for (size_t d = 0; d < buf->shape.size(); ++d) {
      llvm::Value* dim = b.CreateCall(tensor_dim, {t, b.getInt32(static_cast<int>(d))},
                                      absl::StrCat(buf->name, ".dim", d));
      const ir::Expr& e = buf->shape[d];
      auto* v = e.As<ir::Variable>();
      if (v && !vars_.count(v)) {
        ReturnIfNonzero(
            b.CreateCall(check_range, {fname, bname, b.getInt32(static_cast<int>(d)), dim}));
        vars_[v] = b.CreateIntCast(dim, LLVMType(e.type()), true, v->name);
      } else {
        deferred.push_back({bname, static_cast<int>(d), dim, e});
      }
    }
  }
  for (auto& d : deferred) {
    llvm::Value* expected = EmitExpr(d.expected);
    if (!status_.ok()) return;
    expected = b.CreateIntCast(expected, i64(), !d.expected.type().is_uint());
    ReturnIfNonzero(
        b.CreateCall(check_dim, {fname, d.tensor_name, b.getInt32(d.dim), d.got, expected}));
  }
  EmitStmt(func.body);
  b.CreateRet(b.getInt32(0));
}

// ---------------------------------------------------------------------------------------------
// Expressions

llvm::Value* CodeGenLLVM::EmitExpr(const ir::Expr& e) {
  auto& b = *builder_;
  if (!e.defined()) return Fail(absl::InternalError("undefined expression"));
  if (!status_.ok()) return Fail(status_, LLVMType(e.type()));  // stop emitting after an error
  switch (e.kind()) {
    case ir::IrNodeKind::kIntImm: {
      auto* op = e.As<ir::IntImm>();
      return llvm::ConstantInt::get(LLVMType(op->type), static_cast<uint64_t>(op->value),
                                    op->type.is_int());
    }
    case ir::IrNodeKind::kFloatImm: {
      auto* op = e.As<ir::FloatImm>();
      return llvm::ConstantFP::get(LLVMType(op->type), op->value);
    }
    case ir::IrNodeKind::kStringImm:
      return ConstString(e.As<ir::StringImm>()->value);
    case ir::IrNodeKind::kVariable: {
      auto* op = e.As<ir::Variable>();
      auto it = vars_.find(op);
      if (it == vars_.end()) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
                        "variable ", op->name, " is used but not bound (not a loop index, ",
                        "a symbolic dimension of an argument or a buffer)")),
                    LLVMType(op->type));
      }
      return it->second;
    }
#define CINN_LIKE_BINARY_CASE(name, sym) case ir::IrNodeKind::k##name:
      CINN_LIKE_BINARY_NODES(CINN_LIKE_BINARY_CASE)
#undef CINN_LIKE_BINARY_CASE
      return EmitBinary(static_cast<const ir::BinaryNode*>(e.get()));
    case ir::IrNodeKind::kNot:
      return b.CreateNot(EmitExpr(e.As<ir::Not>()->a));
    case ir::IrNodeKind::kSelect: {
      auto* op = e.As<ir::Select>();
      llvm::Value* c = EmitExpr(op->cond);
      llvm::Value* t = EmitExpr(op->true_value);
      llvm::Value* f = EmitExpr(op->false_value);
      if (op->cond.type().is_scalar() && op->type.is_vector()) {
        c = b.CreateVectorSplat(op->type.lanes(), c);
      }
      return b.CreateSelect(c, t, f);
    }
    case ir::IrNodeKind::kCast:
      return EmitCast(e.As<ir::Cast>());
    case ir::IrNodeKind::kLoad:
      return EmitLoad(e.As<ir::Load>());
    case ir::IrNodeKind::kRamp:
      return EmitRamp(e.As<ir::Ramp>());
    case ir::IrNodeKind::kBroadcast: {
      auto* op = e.As<ir::Broadcast>();
      return b.CreateVectorSplat(op->lanes, EmitExpr(op->value));
    }
    case ir::IrNodeKind::kCall: {
      auto* op = e.As<ir::Call>();
      if (op->call_kind == ir::Call::CallKind::kIntrinsic) return EmitIntrinsicCall(op);
      return EmitPureCall(op);
    }
    default:
      return Fail(absl::InternalError(
          absl::StrCat("statement node ", ir::KindName(e.kind()), " used as an expression")));
  }
}

llvm::Value* CodeGenLLVM::EmitBinary(const ir::BinaryNode* op) {
  auto& b = *builder_;
  llvm::Value* x = EmitExpr(op->a);
  llvm::Value* y = EmitExpr(op->b);
  const ir::Type& t = op->a.type();
  bool is_float = t.is_float();
  bool is_signed = t.is_int();
  switch (op->kind) {
    case ir::IrNodeKind::kAdd:
      return is_float ? b.CreateFAdd(x, y) : b.CreateAdd(x, y);
    case ir::IrNodeKind::kSub:
      return is_float ? b.CreateFSub(x, y) : b.CreateSub(x, y);
    case ir::IrNodeKind::kMul:
      return is_float ? b.CreateFMul(x, y) : b.CreateMul(x, y);
    case ir::IrNodeKind::kDiv:
      return is_float ? b.CreateFDiv(x, y) : is_signed ? b.CreateSDiv(x, y) : b.CreateUDiv(x, y);
    case ir::IrNodeKind::kMod:
      return is_float ? b.CreateFRem(x, y) : is_signed ? b.CreateSRem(x, y) : b.CreateURem(x, y);
    case ir::IrNodeKind::kMin:
      if (is_float) return b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y);
      return b.CreateSelect(is_signed ? b.CreateICmpSLT(x, y) : b.CreateICmpULT(x, y), x, y);
    case ir::IrNodeKind::kMax:
      if (is_float) return b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y);
      return b.CreateSelect(is_signed ? b.CreateICmpSGT(x, y) : b.CreateICmpUGT(x, y), x, y);
    case ir::IrNodeKind::kEQ:
      return is_float ? b.CreateFCmpOEQ(x, y) : b.CreateICmpEQ(x, y);
    case ir::IrNodeKind::kNE:
      return is_float ? b.CreateFCmpUNE(x, y) : b.CreateICmpNE(x, y);
    case ir::IrNodeKind::kLT:
      return is_float    ? b.CreateFCmpOLT(x, y)
             : is_signed ? b.CreateICmpSLT(x, y)
                         : b.CreateICmpULT(x, y);
    case ir::IrNodeKind::kLE:
      return is_float    ? b.CreateFCmpOLE(x, y)
             : is_signed ? b.CreateICmpSLE(x, y)
                         : b.CreateICmpULE(x, y);
    case ir::IrNodeKind::kGT:
      return is_float    ? b.CreateFCmpOGT(x, y)
             : is_signed ? b.CreateICmpSGT(x, y)
                         : b.CreateICmpUGT(x, y);
    case ir::IrNodeKind::kGE:
      return is_float    ? b.CreateFCmpOGE(x, y)
             : is_signed ? b.CreateICmpSGE(x, y)
                         : b.CreateICmpUGE(x, y);
    case ir::IrNodeKind::kAnd:
      return b.CreateAnd(x, y);
    case ir::IrNodeKind::kOr:
      return b.CreateOr(x, y);
    default:
      return Fail(absl::InternalError(absl::StrCat("not a binary node: ", ir::KindName(op->kind))),
                  LLVMType(op->type));
  }
}

llvm::Value* CodeGenLLVM::EmitCast(const ir::Cast* op) {
  auto& b = *builder_;
  llvm::Value* v = EmitExpr(op->value);
  const ir::Type& from = op->value.type();
  const ir::Type& to = op->type;
  llvm::Type* dst = LLVMType(to);
  if (from.is_handle() || to.is_handle() || from.is_string() || to.is_string()) {
    return Fail(absl::InvalidArgumentError(
                    absl::StrCat("cannot cast ", from.ToString(), " to ", to.ToString())),
                dst);
  }
  if (to.is_bool()) {
    if (from.is_float()) return b.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (from.is_bool()) return to.is_float() ? b.CreateUIToFP(v, dst) : b.CreateZExt(v, dst);
  if (from.is_float() && to.is_float()) return b.CreateFPCast(v, dst);
  if (from.is_float()) return to.is_int() ? b.CreateFPToSI(v, dst) : b.CreateFPToUI(v, dst);
  if (to.is_float()) return from.is_int() ? b.CreateSIToFP(v, dst) : b.CreateUIToFP(v, dst);
  return b.CreateIntCast(v, dst, from.is_int());
}

llvm::Value* CodeGenLLVM::BufferPointer(const ir::Buffer& buffer) {
  auto it = vars_.find(buffer.get() ? buffer->data.node() : nullptr);
  if (it == vars_.end()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
                    "buffer ", buffer->name, " is used but is neither an argument nor allocated")),
                ptr());
  }
  return it->second;
}

llvm::Value* CodeGenLLVM::ElementPointer(const ir::Buffer& buffer, llvm::Value* index) {
  return builder_->CreateInBoundsGEP(MemoryType(buffer->dtype), BufferPointer(buffer), index);
}

namespace {
bool IsDenseRamp(const ir::Expr& index) {
  auto* ramp = index.As<ir::Ramp>();
  return ramp && ir::IsConstInt(ramp->stride, 1);
}
}  // namespace

llvm::Value* CodeGenLLVM::EmitLoad(const ir::Load* op) {
  auto& b = *builder_;
  if (op->indices.size() != 1) {
    return Fail(absl::InvalidArgumentError(
                    absl::StrCat("load from ", op->buffer->name, " has ", op->indices.size(),
                                 " indices: storage flattening must run before code generation")),
                LLVMType(op->type));
  }
  const ir::Type& elem = op->buffer->dtype;
  llvm::Type* mem_elem = MemoryType(elem);
  llvm::Align align(elem.bytes());
  const ir::Expr& index = op->indices[0];
  llvm::Value* result = nullptr;
  if (op->type.is_scalar()) {
    result = b.CreateAlignedLoad(mem_elem, ElementPointer(op->buffer, EmitExpr(index)), align);
  } else if (IsDenseRamp(index)) {
    llvm::Value* p = ElementPointer(op->buffer, EmitExpr(index.As<ir::Ramp>()->base));
    result = b.CreateAlignedLoad(MemoryType(op->type), p, align);
  } else {
    llvm::Value* idx = EmitExpr(index);
    result = llvm::PoisonValue::get(MemoryType(op->type));
    for (int k = 0; k < op->type.lanes(); ++k) {
      llvm::Value* lane = b.CreateExtractElement(idx, b.getInt32(k));
      llvm::Value* v = b.CreateAlignedLoad(mem_elem, ElementPointer(op->buffer, lane), align);
      result = b.CreateInsertElement(result, v, b.getInt32(k));
    }
  }
  if (elem.is_bool()) result = b.CreateTrunc(result, LLVMType(op->type));
  return result;
}

void CodeGenLLVM::EmitStore(const ir::Store* op) {
  auto& b = *builder_;
  if (op->indices.size() != 1) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("store to ", op->buffer->name, " has ", op->indices.size(),
                     " indices: storage flattening must run before code generation")));
    return;
  }
  const ir::Type& elem = op->buffer->dtype;
  const ir::Type& vt = op->value.type();
  llvm::Type* mem_elem = MemoryType(elem);
  llvm::Align align(elem.bytes());
  const ir::Expr& index = op->indices[0];
  llvm::Value* value = EmitExpr(op->value);
  if (elem.is_bool()) value = b.CreateZExt(value, MemoryType(vt));
  if (index.type().lanes() != vt.lanes()) {
    Fail(absl::InvalidArgumentError(absl::StrCat("store to ", op->buffer->name, " of ",
                                                 vt.ToString(), " with an index of ",
                                                 index.type().lanes(), " lanes")));
    return;
  }
  if (vt.is_scalar()) {
    b.CreateAlignedStore(value, ElementPointer(op->buffer, EmitExpr(index)), align);
  } else if (IsDenseRamp(index)) {
    b.CreateAlignedStore(value, ElementPointer(op->buffer, EmitExpr(index.As<ir::Ramp>()->base)),
                         align);
  } else {
    llvm::Value* idx = EmitExpr(index);
    for (int k = 0; k < vt.lanes(); ++k) {
      llvm::Value* lane = b.CreateExtractElement(idx, b.getInt32(k));
      llvm::Value* v = b.CreateExtractElement(value, b.getInt32(k));
      b.CreateAlignedStore(v, ElementPointer(op->buffer, lane), align);
    }
  }
  (void)mem_elem;
}

llvm::Value* CodeGenLLVM::EmitRamp(const ir::Ramp* op) {
  auto& b = *builder_;
  llvm::Value* base = EmitExpr(op->base);
  llvm::Value* stride = EmitExpr(op->stride);
  if (!op->base.type().is_integer()) {
    return Fail(absl::UnimplementedError("ramp of a non-integer type " + op->type.ToString()),
                LLVMType(op->type));
  }
  std::vector<llvm::Constant*> steps;
  for (int k = 0; k < op->lanes; ++k) steps.push_back(llvm::ConstantInt::get(base->getType(), k));
  llvm::Value* offsets =
      b.CreateMul(b.CreateVectorSplat(op->lanes, stride), llvm::ConstantVector::get(steps));
  return b.CreateAdd(b.CreateVectorSplat(op->lanes, base), offsets);
}

llvm::Value* CodeGenLLVM::EmitPureCall(const ir::Call* op) {
  auto& b = *builder_;
  llvm::Type* ty = LLVMType(op->type);
  const ir::Type& et = op->type.ElementOf();
  if (!et.is_float() || (et.bits() != 32 && et.bits() != 64)) {
    return Fail(absl::UnimplementedError(absl::StrCat("math function ", op->name, " on ",
                                                      op->type.ToString(),
                                                      ": only float32 and float64 are supported")),
                ty);
  }
  std::vector<llvm::Value*> args;
  for (auto& a : op->args) {
    llvm::Value* v = EmitExpr(a);
    if (v->getType() != ty) {
      return Fail(absl::InvalidArgumentError(
                      absl::StrCat("math function ", op->name, " of type ", op->type.ToString(),
                                   " has an argument of type ", a.type().ToString())),
                  ty);
    }
    args.push_back(v);
  }
  // Accept both "exp" and the C float spelling "expf".
  std::string base = op->name;
  auto known = [](const std::string& n) {
    return MathIntrinsics().count(n) || LibmFunctions().count(n);
  };
  if (!known(base) && base.size() > 1 && base.back() == 'f' &&
      known(base.substr(0, base.size() - 1))) {
    base.pop_back();
  }
  auto intrinsic = MathIntrinsics().find(base);
  if (intrinsic != MathIntrinsics().end()) {
    llvm::Function* fn = llvm::Intrinsic::getDeclaration(module_.get(), intrinsic->second, {ty});
    if (fn->getFunctionType()->getNumParams() != args.size()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("math function ", op->name, " takes ",
                                                          fn->getFunctionType()->getNumParams(),
                                                          " arguments, got ", args.size())),
                  ty);
    }
    return b.CreateCall(fn, args);
  }
  if (!LibmFunctions().count(base)) {
    return Fail(absl::UnimplementedError(absl::StrCat("unknown math function ", op->name)), ty);
  }
  llvm::Type* scalar = LLVMType(et);
  std::string libm = et.bits() == 32 ? base + "f" : base;
  std::vector<llvm::Type*> params(args.size(), scalar);
  auto callee = RuntimeFunction(libm, scalar, params);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setOnlyAccessesInaccessibleMemory();
    f->setWillReturn();
  }
  if (op->type.is_scalar()) return b.CreateCall(callee, args);
  llvm::Value* result = llvm::PoisonValue::get(ty);
  for (int k = 0; k < op->type.lanes(); ++k) {
    std::vector<llvm::Value*> lane_args;
    for (auto* a : args) lane_args.push_back(b.CreateExtractElement(a, b.getInt32(k)));
    result = b.CreateInsertElement(result, b.CreateCall(callee, lane_args), b.getInt32(k));
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Statements

void CodeGenLLVM::EmitStmt(const ir::Stmt& s) {
  if (!s.defined() || !status_.ok()) return;
  switch (s.kind()) {
    case ir::IrNodeKind::kStore:
      EmitStore(s.As<ir::Store>());
      return;
    case ir::IrNodeKind::kFor:
      EmitFor(s.As<ir::For>());
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
  EmitStmt(op->body);
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
  // What the body needs from outside: captured by value in a closure struct.
  FreeVars fv;
  fv.defined.insert(op->loop_var.node());
  fv.Visit(op->body);
  std::vector<const ir::Variable*> captured;
  std::vector<llvm::Value*> values;
  std::vector<llvm::Type*> types;
  llvm::Type* ity = LLVMType(op->loop_var.type());
  llvm::Value* mn = b.CreateIntCast(EmitExpr(op->min), ity, true);
  values.push_back(mn);
  types.push_back(ity);
  for (auto* v : fv.vars) {
    auto it = vars_.find(v);
    if (it == vars_.end()) continue;  // reported as unbound when the body is emitted
    captured.push_back(v);
    values.push_back(it->second);
    types.push_back(it->second->getType());
  }
  auto* closure_ty = llvm::StructType::get(*context_, types);
  llvm::Value* closure = EntryAlloca(closure_ty, nullptr, op->loop_var.name() + ".closure");
  for (size_t k = 0; k < values.size(); ++k) {
    b.CreateStore(values[k], b.CreateStructGEP(closure_ty, closure, static_cast<unsigned>(k)));
  }
  llvm::Value* extent = b.CreateIntCast(EmitExpr(op->extent), i32(), true);

  // The outlined body: void fn(i32 index, ptr closure).
  auto* body_ty = llvm::FunctionType::get(b.getVoidTy(), {i32(), ptr()}, false);
  auto* body_fn = llvm::Function::Create(
      body_ty, llvm::Function::InternalLinkage,
      absl::StrCat(func_name_, "_parallel_", parallel_count_++, "_", op->loop_var.name()),
      *module_);
  llvm::Function* saved_fn = function_;
  llvm::IRBuilderBase::InsertPoint saved_ip = b.saveIP();
  auto saved_vars = vars_;
  function_ = body_fn;
  b.SetInsertPoint(llvm::BasicBlock::Create(*context_, "entry", body_fn));
  llvm::Value* in = body_fn->getArg(1);
  vars_.clear();
  llvm::Value* fmin = b.CreateLoad(types[0], b.CreateStructGEP(closure_ty, in, 0));
  for (size_t k = 0; k < captured.size(); ++k) {
    vars_[captured[k]] =
        b.CreateLoad(types[k + 1], b.CreateStructGEP(closure_ty, in, static_cast<unsigned>(k + 1)),
                     captured[k]->name);
  }
  llvm::Value* index = b.CreateIntCast(body_fn->getArg(0), ity, true);
  vars_[op->loop_var.node()] = b.CreateAdd(fmin, index, op->loop_var.name());
  EmitStmt(op->body);
  b.CreateRetVoid();
  function_ = saved_fn;
  vars_ = std::move(saved_vars);
  b.restoreIP(saved_ip);

  auto parallel_for = RuntimeFunction("cinn_like_parallel_for", i32(), {i32(), ptr(), ptr()});
  llvm::Value* rc = b.CreateCall(parallel_for, {extent, body_fn, closure});
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

void CodeGenLLVM::EmitAllocate(const ir::Allocate* op) {
  auto& b = *builder_;
  const ir::Buffer& buf = op->buffer;
  constexpr int64_t kMaxStackBytes = 64 * 1024;
  int64_t elems = 1;
  bool constant = true;
  for (auto& d : buf->shape) {
    if (auto* c = ir::AsConstInt(d)) {
      elems *= *c;
    } else {
      constant = false;
    }
  }
  llvm::Type* elem = MemoryType(buf->dtype);
  int64_t bytes = elems * buf->dtype.bytes();
  bool on_stack = constant && (buf->scope != ir::MemoryScope::kGlobal || bytes <= kMaxStackBytes);
  if (on_stack) {
    llvm::AllocaInst* a = EntryAlloca(elem, b.getInt64(std::max<int64_t>(elems, 1)), buf->name);
    a->setAlignment(llvm::Align(64));
    vars_[buf->data.node()] = a;
    EmitStmt(op->body);
    vars_.erase(buf->data.node());
    return;
  }
  llvm::Value* count = b.getInt64(1);
  for (auto& d : buf->shape) {
    count = b.CreateMul(count, b.CreateIntCast(EmitExpr(d), i64(), true));
  }
  llvm::Value* size = b.CreateMul(count, b.getInt64(buf->dtype.bytes()));
  auto malloc_fn = RuntimeFunction("malloc", ptr(), {i64()});
  auto free_fn = RuntimeFunction("free", b.getVoidTy(), {ptr()});
  llvm::Value* p = b.CreateCall(malloc_fn, {size}, buf->name);
  vars_[buf->data.node()] = p;
  EmitStmt(op->body);
  vars_.erase(buf->data.node());
  b.CreateCall(free_fn, {p});
}

}  // namespace cinn_like::backends
