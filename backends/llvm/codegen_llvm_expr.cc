/// \file CodeGenLLVM: the translation of IR expressions (arithmetic, loads and stores
/// with vector forms); casts are in codegen_llvm_types.cc, math calls in codegen_llvm_math.cc.
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

/// The LLVM predicate of a comparison node: ordered for floats (NE is unordered, true on NaN,
/// as C's !=), signed or unsigned for integers.
llvm::CmpInst::Predicate ComparePredicate(ir::IrNodeKind kind, bool is_float, bool is_signed) {
  using P = llvm::CmpInst::Predicate;
  struct Row {
    ir::IrNodeKind kind;
    P fp, sint, uint;
  };
  static constexpr Row kRows[] = {
      {ir::IrNodeKind::kEQ, P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ},
      {ir::IrNodeKind::kNE, P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE},
      {ir::IrNodeKind::kLT, P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT},
      {ir::IrNodeKind::kLE, P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE},
      {ir::IrNodeKind::kGT, P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT},
      {ir::IrNodeKind::kGE, P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE},
  };
  for (const Row& r : kRows) {
    if (r.kind == kind) return is_float ? r.fp : is_signed ? r.sint : r.uint;
  }
  return P::BAD_ICMP_PREDICATE;
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
      // In the entry, a value kept in its frame is read from there at each use: the value itself
      // would stay live across every call and check between its definition and its last use,
      // and register allocation over thousands of such ranges (an argument each) grows with
      // their square.
      if (function_ == entry_ && frame_.count(op)) return EntryValue(op);
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
  llvm::Value* x = EmitExpr(op->a);
  llvm::Value* y = EmitExpr(op->b);
  const ir::Type& t = op->a.type();
  if (t.is_low_precision_float()) {
    // Promoted: computed in float32, rounded back (comparisons need no rounding).
    ir::Type f32 = ir::Float(32, t.lanes());
    llvm::Value* r = EmitBinaryOp(op->kind, WidenToFloat(x, t), WidenToFloat(y, t), f32);
    return op->type.is_bool() ? r : NarrowFromFloat(r, t);
  }
  return EmitBinaryOp(op->kind, x, y, t);
}

llvm::Value* CodeGenLLVM::EmitBinaryOp(ir::IrNodeKind kind, llvm::Value* x, llvm::Value* y,
                                       const ir::Type& t) {
  auto& b = *builder_;
  bool is_float = t.is_float();
  bool is_signed = t.is_int();
  switch (kind) {
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
    case ir::IrNodeKind::kNE:
    case ir::IrNodeKind::kLT:
    case ir::IrNodeKind::kLE:
    case ir::IrNodeKind::kGT:
    case ir::IrNodeKind::kGE: {
      llvm::CmpInst::Predicate p = ComparePredicate(kind, is_float, is_signed);
      return is_float ? b.CreateFCmp(p, x, y) : b.CreateICmp(p, x, y);
    }
    case ir::IrNodeKind::kAnd:
      return b.CreateAnd(x, y);
    case ir::IrNodeKind::kOr:
      return b.CreateOr(x, y);
    default:
      return Fail(absl::InternalError(absl::StrCat("not a binary node: ", ir::KindName(kind))),
                  x->getType());
  }
}

llvm::Value* CodeGenLLVM::BufferPointer(const ir::Buffer& buffer) {
  const ir::Variable* data = buffer.get() ? buffer->data.node() : nullptr;
  if (function_ == entry_ && frame_.count(data)) return EntryValue(data);  // see kVariable
  auto it = vars_.find(data);
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

}  // namespace cinn_like::backends
