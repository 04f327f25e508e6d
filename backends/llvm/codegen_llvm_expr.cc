/// \file CodeGenLLVM: the translation of IR expressions (arithmetic, casts, loads and stores
/// with vector forms, math calls).
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

}  // namespace cinn_like::backends
