/// \file Helpers the op computes (the ops in lang) share: numpy broadcast reads, casts with the
/// reference interpreter's semantics, NaN tests and the float32 widening of low-precision
/// floats. Each op family's ComputeFn factories are declared here too.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hlir/op.h"
#include "ir/ir.h"
#include "ir/library_functions.h"
#include "ir/tensor.h"

namespace cinn_like::hlir::ops {

using Indices = std::vector<ir::Expr>;

/// The element of `t` that numpy broadcasting reads for the index `out` of the broadcast
/// result: trailing dims aligned, missing leading dims dropped, known size-1 dims read at 0.
ir::Expr BroadcastRead(const ir::Tensor& t, const Indices& out);
/// Whether `x` is NaN (x != x); the constant false for non-floats.
ir::Expr IsNan(const ir::Expr& x);
/// x != 0 (bool stays as is).
ir::Expr ToBool(const ir::Expr& x);
/// float16 and bfloat16 widened to float32 (what the IR computes them in); others unchanged.
ir::Expr Widen(const ir::Expr& x);
/// A constant of type t.
ir::Expr Const(const ir::Type& t, double v);
/// `x` converted to `t` as hlir::RoundToDType does: floats round to nearest, float to integer
/// truncates toward zero and wraps (NaN and infinities give 0), anything to bool is x != 0.
ir::Expr CastTo(const ir::Type& t, const ir::Expr& x);

/// An elementwise op's scalar function in lang, on operands already widened (float16 and
/// bfloat16 to float32; see Widen); the compute converts its result to the output type.
using UnaryScalar = std::function<ir::Expr(const ir::Expr& x)>;
using BinaryScalar = std::function<ir::Expr(const ir::Expr& a, const ir::Expr& b)>;
/// The op's scalar function for its attributes and output type (binary: operand 0's IR type),
/// or the error an invalid attribute gives.
using UnaryScalarMaker =
    std::function<absl::StatusOr<UnaryScalar>(const AttributeMap& attrs, const ir::Type& out)>;
using BinaryScalarMaker =
    std::function<absl::StatusOr<BinaryScalar>(const AttributeMap& attrs, const ir::Type& operand)>;

/// The computes of the op families (null where an op has none). Unary: out[i] = f(x[i]);
/// binary: out[i] = f(a[i], b[i]) with numpy broadcasting, operands of different dtypes
/// (the logical ops) compared as bool.
ComputeFn UnaryCompute(UnaryScalarMaker make);
ComputeFn BinaryCompute(BinaryScalarMaker make);
ComputeFn CastCompute();
ComputeFn WhereCompute();
/// reduce_sum/max/min/prod by `kind`; `mean` divides a sum by the element count.
ComputeFn ReduceCompute(const std::string& op, ir::ReduceKind kind, bool mean);
ComputeFn ArgReduceCompute(bool is_max);
ComputeFn SoftmaxCompute(bool log);
ComputeFn NormCompute(bool rms);
ComputeFn BatchNormCompute();
ComputeFn MatmulCompute();
ComputeFn LinearCompute();

/// A matmul's epilogue (hlir/pass/matmul_epilogue.h): a bias [n] (its third input) added to
/// every row, then the activation of attribute "activation" ("relu", "gelu_tanh"; "none" or
/// absent: none), both before the product is rounded to its type, as cuBLASLt's epilogue does.
struct MatmulEpilogue {
  bool bias = false;
  int64_t activation = 0;  // the library call's code: 0 none, 1 relu, 2 gelu_tanh
  std::string op;          // the elementwise op applying it ("relu", "gelu"); empty for none
  AttributeMap op_attrs;
};
/// The epilogue of a matmul (or conv2d, `op`) node with `num_inputs` inputs and `attrs`, or an
/// error naming the attribute's value. A conv2d's bias is per output channel.
absl::StatusOr<MatmulEpilogue> GetMatmulEpilogue(size_t num_inputs, const AttributeMap& attrs,
                                                 const std::string& op = "matmul");
/// The epilogue's activation applied to a reference result in place (its op's reference).
absl::Status ReferenceActivation(const MatmulEpilogue& e, HostTensor& o);
/// `acc` (a reduction of type AccType(t)) as `name` of type t.
ir::Tensor CastBack(const ir::Tensor& acc, const ir::Type& t, const std::vector<ir::Expr>& shape,
                    const std::string& name);
/// `acc` with the epilogue applied, in acc's type: + bias[bias_index(o)] at each output index o
/// (a matmul's last index, a convolution's channel), then the activation through its
/// elementwise op's compute (`<name>_bias`, `<name>_act`).
absl::StatusOr<ir::Tensor> ApplyEpilogue(const ir::Tensor& acc, const MatmulEpilogue& e,
                                         const ir::Tensor& bias, const std::string& name,
                                         const std::function<ir::Expr(const Indices&)>& bias_index);
/// Library-call computes (OpDef::extern_compute; hlir/ops/matmul_extern.cc, conv_extern.cc):
/// each calls the function its target's library has (ir/library_functions.h) and declines,
/// saying why, the cases the call cannot express or the library refuses.
ExternComputeFn MatmulExternCompute();
ExternComputeFn LinearExternCompute();
ExternComputeFn Conv2dExternCompute();
/// conv2d_backward_data (`filter` false) or conv2d_backward_filter as one library call
/// (ir::LibraryCall::kConv2dBackwardData / kConv2dBackwardFilter: cuDNN on NVGPU).
ExternComputeFn ConvBackwardExternCompute(bool filter);
/// The library function for `call` on `target` that takes `args` (the call's integer
/// arguments: each folded to its constant, or ir::kArgAtCall).
absl::StatusOr<ir::LibraryFunction> FindLibrary(const ir::Target& target, ir::LibraryCall call,
                                                const std::vector<ir::Expr>& args);
/// What a library call made: `tensors`, run by `f` ("oneDNN cinn_like_dnnl_matmul (...)").
ExternTensors MadeBy(const ir::LibraryFunction& f, std::vector<ir::Tensor> tensors);
/// An extern compute's answer for a case it leaves to the generated compute, and why.
ExternTensors Declined(std::string why);

/// `e` as an int64 library-call argument (cast unless it is one already).
ir::Expr AsInt64(const ir::Expr& e);
/// The row-major element strides of `shape`, int64 (hlir::RowMajorStrides' for expressions).
std::vector<ir::Expr> RowMajorStrideExprs(const std::vector<ir::Expr>& shape);
/// The float32 Philox uniform (intrinsic philox_uniform) of (`seed`, `stream`) at the int64
/// row-major index of `indices` in `shape`: random_uniform's element there, and the dropout
/// weight attention draws for that probability.
ir::Expr PhiloxAt(const ir::Expr& seed, const ir::Expr& stream, const std::vector<ir::Expr>& shape,
                  const std::vector<ir::Expr>& indices);
/// The injective shape ops (hlir/ops/shape_ops_compute.cc).
ComputeFn ReshapeCompute();
ComputeFn TransposeCompute();
ComputeFn BroadcastToCompute();
ComputeFn ExpandDimsCompute();
ComputeFn SqueezeCompute();
ComputeFn ConcatCompute();
ComputeFn FillCompute();
ComputeFn ArangeCompute();

}  // namespace cinn_like::hlir::ops
