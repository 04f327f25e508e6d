/// \file Building Placeholder and Compute tensors; recognising reductions.
#include "ir/tensor.h"

#include <glog/logging.h>

#include <cmath>
#include <limits>
#include <set>

#include "ir/math.h"
#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

/// The marker intrinsic of a reduce kind (kind is not kNone), and back.
IntrinsicOp MarkerOf(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax:
      return IntrinsicOp::kReduceMax;
    case ReduceKind::kMin:
      return IntrinsicOp::kReduceMin;
    case ReduceKind::kProd:
      return IntrinsicOp::kReduceProd;
    default:
      return IntrinsicOp::kReduceSum;
  }
}
ReduceKind KindOfMarker(const Call& call) {
  for (ReduceKind k : {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin, ReduceKind::kProd}) {
    if (call.is_intrinsic(MarkerOf(k))) return k;
  }
  return ReduceKind::kNone;
}

Expr MakeReduceMarker(ReduceKind kind, Expr body, const std::vector<IterVar>& axes) {
  // The marker carries the axes and their extents as arguments: body, var0, ext0, var1, ...
  std::vector<Expr> args{body};
  for (auto& a : axes) {
    args.push_back(a.var);
    args.push_back(a.extent);
  }
  return Call::Make(body.type(), MarkerOf(kind), args);
}

/// The tensors whose buffers an expression reads.
class ProducerFinder : public IRVisitor {
 public:
  using IRVisitor::Visit;
  std::vector<const BufferNode*> buffers;

 protected:
  void VisitLoad(const Load* op) override {
    if (seen_.insert(op->buffer.get()).second) buffers.push_back(op->buffer.get());
    IRVisitor::VisitLoad(op);
  }

 private:
  std::set<const BufferNode*> seen_;
};

std::string AxisName(size_t i) {
  static const char* kNames[] = {"i", "j", "k", "l", "m"};
  return i < 5 ? kNames[i] : "i" + std::to_string(i);
}

}  // namespace

IterVar ReduceAxis(Expr extent, std::string name) { return {Var(std::move(name)), extent}; }

Expr Tensor::operator()(std::vector<Expr> indices) const {
  // A rank-0 value of the graph is held as a one-element tensor of shape [1]
  // (hlir::GroupLowering::ShapeExprs): read without an index, it is that element.
  if (indices.empty() && node_->shape.size() == 1 && IsConstInt(node_->shape[0], 1)) {
    indices.push_back(Expr(0));
  }
  CHECK_EQ(indices.size(), node_->shape.size())
      << "tensor " << node_->name << " of rank " << node_->shape.size() << " indexed with "
      << indices.size() << " indices";
  return Load::Make(node_->buffer, std::move(indices));
}

Tensor Placeholder(const std::string& name, Type dtype, const std::vector<Expr>& shape) {
  auto t = std::make_shared<TensorNode>();
  t->name = name;
  t->dtype = dtype;
  t->shape = shape;
  t->buffer = MakeBuffer(name, dtype, shape);
  t->buffer->defining_tensor = t;
  return Tensor(t);
}

Tensor Compute(const std::vector<Expr>& shape,
               const std::function<Expr(const std::vector<Expr>&)>& fn, const std::string& name) {
  auto t = std::make_shared<TensorNode>();
  t->name = name;
  t->shape = shape;
  t->is_placeholder = false;
  std::vector<Expr> index;
  for (size_t i = 0; i < shape.size(); ++i) {
    t->axes.emplace_back(AxisName(i));
    index.push_back(t->axes.back());
  }
  Expr value = fn(index);
  auto* call = value.As<Call>();
  if (ReduceKind kind = call ? KindOfMarker(*call) : ReduceKind::kNone; kind != ReduceKind::kNone) {
    t->reduce = kind;
    for (size_t a = 1; a + 1 < call->args.size(); a += 2) {
      t->reduce_axes.push_back({Var(call->args[a]), call->args[a + 1]});
    }
    value = call->args[0];  // last: `value` holds the marker `call` points into
  }
  t->body = value;
  t->dtype = value.type();
  t->buffer = MakeBuffer(name, t->dtype, shape);
  t->buffer->defining_tensor = t;
  ProducerFinder finder;
  finder.Visit(value);
  for (const BufferNode* b : finder.buffers) {
    auto owner = std::static_pointer_cast<TensorNode>(b->defining_tensor.lock());
    if (owner) t->inputs.push_back(owner);
  }
  return Tensor(t);
}

Tensor ExternTensor(const std::string& name, Type dtype, const std::vector<Expr>& shape,
                    const std::vector<Tensor>& inputs,
                    std::function<Stmt(const std::vector<Buffer>&, const Buffer&)> body) {
  auto t = std::make_shared<TensorNode>();
  t->name = name;
  t->dtype = dtype;
  t->shape = shape;
  t->is_placeholder = false;
  t->buffer = MakeBuffer(name, dtype, shape);
  t->buffer->defining_tensor = t;
  for (const Tensor& in : inputs) t->inputs.push_back(in.node());
  t->extern_body = std::move(body);
  return Tensor(t);
}

Stmt ExternCall(const std::string& function, const std::vector<Expr>& args) {
  std::vector<Expr> call_args{StringImm::Make(function)};
  call_args.insert(call_args.end(), args.begin(), args.end());
  return Evaluate::Make(Call::Make(Int(32), IntrinsicOp::kExternCall, call_args));
}

Expr ReduceSum(Expr body, const std::vector<IterVar>& axes) {
  return MakeReduceMarker(ReduceKind::kSum, std::move(body), axes);
}
Expr ReduceMax(Expr body, const std::vector<IterVar>& axes) {
  return MakeReduceMarker(ReduceKind::kMax, std::move(body), axes);
}
Expr ReduceMin(Expr body, const std::vector<IterVar>& axes) {
  return MakeReduceMarker(ReduceKind::kMin, std::move(body), axes);
}
Expr ReduceProd(Expr body, const std::vector<IterVar>& axes) {
  return MakeReduceMarker(ReduceKind::kProd, std::move(body), axes);
}

Expr ReduceInit(ReduceKind kind, Type t) {
  double inf = t.is_float() ? std::numeric_limits<double>::infinity() : 0;
  switch (kind) {
    case ReduceKind::kSum:
      return MakeConst(t, 0);
    case ReduceKind::kMax:
      if (t.is_float()) return MakeConst(t, -inf);
      return MakeConst(t, t.is_uint() ? 0.0 : -std::ldexp(1.0, t.bits() - 1));
    case ReduceKind::kMin:
      if (t.is_float()) return MakeConst(t, inf);
      // 2^63 - 1 is not a double: int64's highest value is built exactly.
      if (t.is_int() && t.bits() == 64 && t.is_scalar()) {
        return IntImm::Make(t, std::numeric_limits<int64_t>::max());
      }
      return MakeConst(t, std::ldexp(1.0, t.bits() - (t.is_uint() ? 0 : 1)) - 1);
    case ReduceKind::kProd:
      return MakeConst(t, 1);
    case ReduceKind::kNone:
      break;
  }
  LOG(FATAL) << "no init for a non-reduction";
  return Expr();
}

Expr ReduceCombine(ReduceKind kind, Expr acc, Expr value) {
  switch (kind) {
    case ReduceKind::kSum:
      return acc + value;
    // A float's extreme keeps a NaN (ir/math.h maximum), as PyTorch's max and min do.
    case ReduceKind::kMax:
      return acc.type().is_float() ? MathCall(MathOp::kMaximum, {acc, value}) : max(acc, value);
    case ReduceKind::kMin:
      return acc.type().is_float() ? MathCall(MathOp::kMinimum, {acc, value}) : min(acc, value);
    case ReduceKind::kProd:
      return acc * value;
    case ReduceKind::kNone:
      break;
  }
  LOG(FATAL) << "no combine for a non-reduction";
  return Expr();
}

}  // namespace cinn_like::ir
