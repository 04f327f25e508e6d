/// \file `lang`: tensors described as functions of their indices, in the style of TVM's te and
/// CINN's lang. A Placeholder is an input; a Compute defines each element by an expression of
/// its index variables; a reduction (ReduceSum/Max/Min/Prod over reduce axes) is a Compute whose
/// expression is a reduction.
///
///   Var n("n");
///   Tensor A = Placeholder("A", Float(32), {n});
///   Tensor B = Placeholder("B", Float(32), {n});
///   Tensor C = Compute({n}, [&](const std::vector<Expr>& i) { return A(i[0]) + B(i[0]); }, "C");
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace cinn_like::ir {

/// An iteration axis: a variable and its extent [0, extent).
struct IterVar {
  Var var;
  Expr extent;
};

/// A reduction axis of the given extent, for ReduceSum/ReduceMax/ReduceMin/ReduceProd.
IterVar ReduceAxis(Expr extent, std::string name = "k");

enum class ReduceKind : uint8_t { kNone, kSum, kMax, kMin, kProd };

struct TensorNode {
  std::string name;
  Type dtype;
  std::vector<Expr> shape;
  /// Where the tensor's elements live.
  Buffer buffer;
  /// Compute tensors: one index variable per dimension, the element expression in terms of
  /// them (for a reduction, the value combined over the reduce axes), and the producers read.
  bool is_placeholder = true;
  std::vector<Var> axes;
  Expr body;
  ReduceKind reduce = ReduceKind::kNone;
  std::vector<IterVar> reduce_axes;
  std::vector<std::shared_ptr<TensorNode>> inputs;
  /// Extern tensors (a library call such as cuBLAS, TVM's ExternOp): when set, the tensor is
  /// computed by the statement this returns, given the buffers of `inputs` and of this tensor;
  /// it has no axes or body to schedule, and stays in host code on NVGPU.
  std::function<Stmt(const std::vector<Buffer>& inputs, const Buffer& output)> extern_body;
  /// An extern whose output is its first input updated (index_add's scatter: out = x, then
  /// additions), whose statement, handed the output buffer as its first input too, skips the
  /// copy. Lower does so where x is an intermediate of x's shape and dtype that nothing else
  /// reads: x's producer then stores straight into the output (ir/in_place_extern.h).
  bool extern_updates_first_input = false;
  /// A value its op builds as a tensor of its own for the readers that share it (softmax's
  /// exp(x - max), read by the sum and by the quotient), cheaper to compute again in each
  /// than to store: schedulers inline it wherever its readers' group is computed (a tactic
  /// may still compute it once per row, hlir/group_schedule/persistent_row_tactic.h).
  bool recompute = false;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorNode> node) : node_(std::move(node)) {}
  const TensorNode* operator->() const { return node_.get(); }
  const std::shared_ptr<TensorNode>& node() const { return node_; }
  bool defined() const { return node_ != nullptr; }
  const std::string& name() const { return node_->name; }

  /// The element at `indices` (one per dimension): a Load from the tensor's buffer.
  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Args>
  Expr operator()(Expr first, Args... rest) const {
    return (*this)(std::vector<Expr>{first, Expr(rest)...});
  }

 private:
  std::shared_ptr<TensorNode> node_;
};

/// An input tensor.
Tensor Placeholder(const std::string& name, Type dtype, const std::vector<Expr>& shape);

/// A tensor whose element at index i is fn(i). If fn returns ReduceSum/Max/Min/Prod(...) at its
/// top level, the tensor is a reduction over those axes (initialized with 0, -inf, +inf, 1).
Tensor Compute(const std::vector<Expr>& shape,
               const std::function<Expr(const std::vector<Expr>&)>& fn, const std::string& name);

/// A tensor computed by a library call (TVM's ExternOp): `body` returns the statement that
/// writes the output buffer given the buffers of `inputs` (in order) and of the tensor, usually
/// an Evaluate of an ExternCall. It has no loops to schedule; on NVGPU it stays in host code,
/// in order with the kernel launches, and its inputs must be stored (not inlined).
Tensor ExternTensor(const std::string& name, Type dtype, const std::vector<Expr>& shape,
                    const std::vector<Tensor>& inputs,
                    std::function<Stmt(const std::vector<Buffer>&, const Buffer&)> body);

/// Evaluate(extern_call(function, args...)): a call of the runtime C function `function`
/// (IntrinsicOp::kExternCall, ir/intrinsics.h says how arguments pass).
Stmt ExternCall(const std::string& function, const std::vector<Expr>& args);

/// Reduction markers, valid only as the whole result of a Compute function.
Expr ReduceSum(Expr body, const std::vector<IterVar>& axes);
Expr ReduceMax(Expr body, const std::vector<IterVar>& axes);
Expr ReduceMin(Expr body, const std::vector<IterVar>& axes);
Expr ReduceProd(Expr body, const std::vector<IterVar>& axes);

/// The identity of a reduction for `t` (0, lowest, highest, 1).
Expr ReduceInit(ReduceKind kind, Type t);
/// combine(acc, value) of a reduction.
Expr ReduceCombine(ReduceKind kind, Expr acc, Expr value);

}  // namespace cinn_like::ir
