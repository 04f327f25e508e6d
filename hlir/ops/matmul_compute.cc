/// \file matmul and linear in lang: a ReduceSum over k (batch dims broadcast by index
/// mapping); float16 and bfloat16 accumulate in float32 (`<name>_acc`, then a cast), and
/// linear's bias and a matmul's epilogue are elementwise tensors after the reduction.
#include "hlir/ops/compute_util.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Tensors = absl::StatusOr<std::vector<Tensor>>;

/// The batch part of an operand's index for the output batch index `batch` (broadcast).
Indices BatchIndex(const Tensor& t, const Indices& batch) {
  size_t rb = t->shape.size() - 2, offset = batch.size() - rb;
  Indices idx;
  for (size_t d = 0; d < rb; ++d) {
    idx.push_back(ir::IsConstInt(t->shape[d], 1) ? Expr(0) : batch[offset + d]);
  }
  return idx;
}

}  // namespace

Tensor CastBack(const Tensor& acc, const ir::Type& t, const std::vector<Expr>& shape,
                const std::string& name) {
  return ir::Compute(
      shape, [&](const Indices& i) { return CastTo(t, acc(i)); }, name);
}

absl::StatusOr<Tensor> ApplyEpilogue(const Tensor& acc, const MatmulEpilogue& e, const Tensor& bias,
                                     const std::string& name,
                                     const std::function<Expr(const Indices&)>& bias_index) {
  const auto& shape = acc->shape;
  Tensor out = acc;
  if (e.bias) {
    out = ir::Compute(
        shape,
        [&](const Indices& o) {
          return acc(o) + CastTo(acc->dtype, Widen(bias(std::vector<Expr>{bias_index(o)})));
        },
        name + "_bias");
  }
  if (e.op.empty()) return out;
  auto def = OpRegistry::Global().Find(e.op);
  if (!def.ok()) return def.status();
  auto act = (*def)->compute({out}, e.op_attrs, {ComputeOutput{acc->dtype, shape}}, name + "_act");
  if (!act.ok()) return act.status();
  return act->front();
}

absl::StatusOr<MatmulEpilogue> GetMatmulEpilogue(size_t num_inputs, const AttributeMap& attrs,
                                                 const std::string& op) {
  MatmulEpilogue e;
  e.bias = num_inputs == 3;
  auto act = GetString(attrs, "activation", op, "none");
  if (!act.ok()) return act.status();
  if (*act == "relu") {
    e.activation = 1;
    e.op = "relu";
  } else if (*act == "gelu_tanh") {
    e.activation = 2;
    e.op = "gelu";
    e.op_attrs["approximate"] = std::string("tanh");
  } else if (*act != "none") {
    return absl::InvalidArgumentError("op " + op + ": attribute 'activation' is \"" + *act +
                                      "\", expected \"none\", \"relu\" or \"gelu_tanh\"");
  }
  return e;
}

absl::Status ReferenceActivation(const MatmulEpilogue& e, HostTensor& o) {
  if (e.op.empty()) return absl::OkStatus();
  auto def = OpRegistry::Global().Find(e.op);
  if (!def.ok()) return def.status();
  std::vector<HostTensor> act{HostTensor(o.dtype, o.shape)};
  absl::Status s = (*def)->reference({&o}, e.op_attrs, act);
  if (!s.ok()) return s;
  o.data = std::move(act[0].data);
  return absl::OkStatus();
}

ComputeFn MatmulCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    auto tx = GetBool(attrs, "transpose_x", "matmul", false);
    if (!tx.ok()) return tx.status();
    auto ty = GetBool(attrs, "transpose_y", "matmul", false);
    if (!ty.ok()) return ty.status();
    auto epilogue = GetMatmulEpilogue(in.size(), attrs);
    if (!epilogue.ok()) return epilogue.status();
    const bool plain = !epilogue->bias && epilogue->op.empty();
    Tensor x = in[0], y = in[1];
    size_t rx = x->shape.size();
    ir::IterVar k = ir::ReduceAxis(*tx ? x->shape[rx - 2] : x->shape[rx - 1], "k");
    const ir::Type t = outs[0].type;
    bool widen = t.is_low_precision_float();
    const auto& shape = outs[0].shape;
    Tensor acc = ir::Compute(
        shape,
        [&](const Indices& o) {
          size_t ro = o.size();
          Indices batch(o.begin(), o.end() - 2);
          Expr i = o[ro - 2], j = o[ro - 1];
          Indices xi = BatchIndex(x, batch), yi = BatchIndex(y, batch);
          if (*tx) {
            xi.push_back(k.var);
            xi.push_back(i);
          } else {
            xi.push_back(i);
            xi.push_back(k.var);
          }
          if (*ty) {
            yi.push_back(j);
            yi.push_back(k.var);
          } else {
            yi.push_back(k.var);
            yi.push_back(j);
          }
          return ir::ReduceSum(Widen(x(xi)) * Widen(y(yi)), {k});
        },
        widen || !plain ? name + "_acc" : name);
    if (plain) return std::vector<Tensor>{widen ? CastBack(acc, t, shape, name) : acc};
    auto done = ApplyEpilogue(acc, *epilogue, epilogue->bias ? in[2] : Tensor(), name,
                              [](const Indices& o) { return o.back(); });
    if (!done.ok()) return done.status();
    return std::vector<Tensor>{CastBack(*done, t, shape, name)};
  };
}

ComputeFn LinearCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap&,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    Tensor x = in[0], w = in[1];
    ir::IterVar k = ir::ReduceAxis(w->shape[1], "k");
    const ir::Type t = outs[0].type;
    bool widen = t.is_low_precision_float(), bias = in.size() == 3;
    const auto& shape = outs[0].shape;
    Tensor acc = ir::Compute(
        shape,
        [&](const Indices& o) {
          Indices xi(o.begin(), o.end() - 1);
          xi.push_back(k.var);
          return ir::ReduceSum(Widen(x(xi)) * Widen(w(o.back(), k.var)), {k});
        },
        widen || bias ? name + "_acc" : name);
    if (!widen && !bias) return std::vector<Tensor>{acc};
    return std::vector<Tensor>{ir::Compute(
        shape,
        [&](const Indices& o) {
          Expr v = acc(o);
          if (bias) v = v + Widen(in[2](o.back()));
          return CastTo(t, v);
        },
        name)};
  };
}

}  // namespace cinn_like::hlir::ops
