/// \file matmul and linear as library calls (extern tensors calling the target's matmul
/// function, ir::LibraryCall::kMatmul: cuBLAS on NVGPU, oneDNN on x86): row-major
/// strided-batched GEMM; linear's weight is read transposed and its bias added by the same
/// call. A matmul with an epilogue (bias, activation) calls ir::LibraryCall::kMatmulEpilogue
/// (cuBLASLt on NVGPU), which applies it. Cases one strided batch cannot express (a batch partly
/// broadcast, other dtypes), or that the library refuses, are declined: the generated compute
/// serves them.
#include "hlir/ops/compute_util.h"
#include "ir/library_calls.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Stmt;
using ir::Tensor;
using Made = absl::StatusOr<ExternTensors>;

/// The externs' dtype code (runtime/cuda/cublas.h MatmulDType: 3, float32 on TF32 tensor cores,
/// is set from the matmul's allow_tf32), or -1 for another type.
int64_t DTypeCode(const ir::Type& t) {
  if (t.is_vector()) return -1;
  if (t == ir::Float(32)) return 0;
  if (t == ir::Float16()) return 1;
  if (t == ir::BFloat16()) return 2;
  return -1;
}

Expr Product(const std::vector<Expr>& dims, size_t begin, size_t end) {
  Expr p = ir::Expr(int64_t{1});
  for (size_t d = begin; d < end; ++d) p = p * AsInt64(dims[d]);
  return p;
}

/// The batch stride of operand `t` (rank >= 2, matrix of `elems` elements) for an output
/// with batch dims `out_batch`: 0 when every batch dim of t is 1, `elems` when t's batch dims
/// are the output's; false when only some are broadcast.
bool BatchStride(const Tensor& t, const std::vector<Expr>& out_shape, Expr elems, Expr* stride) {
  size_t rt = t->shape.size(), ro = out_shape.size();
  bool all_one = true, full = rt == ro;
  for (size_t d = 0; d + 2 < rt; ++d) {
    bool one = ir::IsConstInt(t->shape[d], 1);
    all_one &= one;
    if (full && one && !ir::IsConstInt(out_shape[d], 1)) full = false;
  }
  if (all_one) {
    *stride = ir::Expr(int64_t{0});
    return true;
  }
  if (!full) return false;
  *stride = elems;
  return true;
}

/// The call's integer arguments (ir::LibraryCall::kMatmul's, without an activation).
ir::MatmulArgs<Expr> MatmulInts(bool bias, int64_t dtype, Expr batch, Expr m, Expr n, Expr k,
                                bool ta, bool tb, Expr stride_a, Expr stride_b) {
  ir::MatmulArgs<Expr> a;
  a.has_bias = Expr(int64_t{bias}), a.dtype = Expr(dtype);
  a.batch = batch, a.m = m, a.n = n, a.k = k;
  a.trans_a = Expr(int64_t{ta}), a.trans_b = Expr(int64_t{tb});
  a.batch_stride_a = stride_a, a.batch_stride_b = stride_b;
  return a;
}

Stmt MatmulCall(const std::string& function, const std::vector<Expr>& pointers,
                const std::vector<Expr>& ints) {
  std::vector<Expr> args = pointers;  // a, b, bias, c
  args.insert(args.end(), ints.begin(), ints.end());
  return ir::ExternCall(function, args);
}

/// The extern tensor calling `f` on inputs `in` (x, y and, with `bias`, the bias) into `out`.
ExternTensors MatmulTensor(const ir::LibraryFunction& f, const std::string& name,
                           const ComputeOutput& out, const std::vector<Tensor>& in, bool bias,
                           const std::vector<Expr>& ints) {
  const std::string function = f.function;
  return MadeBy(f, {ir::ExternTensor(name, out.type, out.shape, in,
                                     [=](const std::vector<ir::Buffer>& b, const ir::Buffer& c) {
                                       return MatmulCall(function,
                                                         {b[0]->data, b[1]->data,
                                                          bias ? b[2]->data : c->data, c->data},
                                                         ints);
                                     })});
}

/// A reduction length known to be 0: the product is all zeros, which the generated compute
/// writes (cuBLAS leaves C unwritten for k 0).
bool NoTerms(const Expr& k) {
  const int64_t* v = ir::AsConstInt(k);
  return v != nullptr && *v == 0;
}

}  // namespace

ExternComputeFn MatmulExternCompute() {
  return [](const ir::Target& target, const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Made {
    auto tx = GetBool(attrs, "transpose_x", "matmul", false);
    if (!tx.ok()) return tx.status();
    auto ty = GetBool(attrs, "transpose_y", "matmul", false);
    if (!ty.ok()) return ty.status();
    auto epilogue = GetMatmulEpilogue(in.size(), attrs);
    if (!epilogue.ok()) return epilogue.status();
    const bool fused = epilogue->bias || epilogue->activation != 0;
    const Tensor &x = in[0], &y = in[1];
    const auto& shape = outs[0].shape;
    int64_t dtype = DTypeCode(outs[0].type);
    size_t ro = shape.size(), rx = x->shape.size();
    bool alike = true;
    for (const Tensor& t : in) alike &= t->dtype == outs[0].type;
    if (dtype < 0 || !alike) {
      return Declined("the library call takes float32, float16 and bfloat16 operands alike");
    }
    // A permission (attribute allow_tf32): GPU libraries may round float32 operands to TF32.
    auto tf32 = GetBool(attrs, "allow_tf32", "matmul", false);
    if (!tf32.ok()) return tf32.status();
    if (*tf32 && dtype == 0 && target.is_gpu()) dtype = 3;
    if (ro < 2) return Declined("the product is not a matrix");
    if (NoTerms(*tx ? x->shape[rx - 2] : x->shape[rx - 1])) return Declined("k is 0");
    Expr m = AsInt64(shape[ro - 2]);
    Expr n = AsInt64(shape[ro - 1]);
    Expr k = AsInt64(*tx ? x->shape[rx - 2] : x->shape[rx - 1]);
    Expr sa, sb;
    if (!BatchStride(x, shape, m * k, &sa) || !BatchStride(y, shape, k * n, &sb)) {
      return Declined("an operand's batch is partly broadcast");
    }
    Expr batch = Product(shape, 0, ro - 2);
    if (!*tx && ir::IsConstInt(sb, 0) && !ir::IsConstInt(sa, 0)) {
      // y is shared by every batch and x's batches are consecutive rows: one GEMM of all rows.
      m = batch * m;
      batch = Expr(int64_t{1});
      sa = Expr(int64_t{0});
    }
    ir::MatmulArgs<Expr> args = MatmulInts(epilogue->bias, dtype, batch, m, n, k, *tx, *ty, sa, sb);
    args.activation = Expr(epilogue->activation);
    const std::vector<Expr> ints = ir::ArgList(args, /*epilogue=*/fused);
    auto f = FindLibrary(target,
                         fused ? ir::LibraryCall::kMatmulEpilogue : ir::LibraryCall::kMatmul, ints);
    if (!f.ok()) return Declined(std::string(f.status().message()));
    return MatmulTensor(*f, name, outs[0], in, epilogue->bias, ints);
  };
}

ExternComputeFn LinearExternCompute() {
  return [](const ir::Target& target, const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Made {
    const auto& shape = outs[0].shape;
    int64_t dtype = DTypeCode(outs[0].type);
    bool alike = true;
    for (const Tensor& t : in) alike &= t->dtype == outs[0].type;
    if (dtype < 0 || !alike) {
      return Declined("the library call takes float32, float16 and bfloat16 operands alike");
    }
    if (NoTerms(in[1]->shape[1])) return Declined("k is 0");
    // x [..., K] as [M, K]; w [N, K] read transposed; bias [N] on every row.
    Expr m = Product(shape, 0, shape.size() - 1);
    Expr n = AsInt64(in[1]->shape[0]);
    Expr k = AsInt64(in[1]->shape[1]);
    bool bias = in.size() == 3;
    Expr zero(int64_t{0});
    const std::vector<Expr> ints =
        ir::ArgList(MatmulInts(bias, dtype, Expr(int64_t{1}), m, n, k, false, true, zero, zero));
    auto f = FindLibrary(target, ir::LibraryCall::kMatmul, ints);
    if (!f.ok()) return Declined(std::string(f.status().message()));
    return MatmulTensor(*f, name, outs[0], in, bias, ints);
  };
}

}  // namespace cinn_like::hlir::ops
