/// \file How an elementwise op is registered: its scalar function twice, on doubles (the
/// reference) and in lang (the compute), plus the dtypes it accepts; RegisterUnary and
/// RegisterBinary make the whole OpDef (inference, reference, compute) from them. The ops
/// themselves are listed in hlir/ops/elementwise.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir::ops {

using UnaryFn = std::function<double(double)>;
using BinaryFn = std::function<double(double, double)>;

/// An elementwise op's scalar function twice: on doubles for the reference interpreter, and in
/// lang for the compute (UnaryScalar: operands widened, floats tested by their type).
struct Unary {
  UnaryFn reference;
  UnaryScalar lang;
  /// When set, the reference instead, given the input's dtype too (a value PyTorch computes in
  /// float32 for the 16- and 32-bit types, such as polygamma's poles).
  std::function<double(double, DType)> typed_reference;
  /// When set, the compute instead where the output is float16 or bfloat16: the same function
  /// with approximate steps (ir::FastExp, ir::FastRecip) whose error stays far below that
  /// rounding's (bias + tanh-gelu of float16 was bound by instruction issue on the precise exp
  /// and division; CUDA's approximate forms are one instruction each).
  UnaryScalar rounded16;
};
struct Binary {
  BinaryFn reference;
  BinaryScalar lang;
};
/// Builds an op's scalar functions from its attributes (validating them).
using UnaryMaker = std::function<absl::StatusOr<Unary>(const AttributeMap&, const std::string&)>;
/// Binary makers also see the operands' dtype (integer division needs a rounding mode).
using BinaryMaker =
    std::function<absl::StatusOr<Binary>(const AttributeMap&, const std::string&, DType)>;

/// The output dtype: the operands' (arithmetic) or bool (comparisons, logic, isnan).
enum class OutDType : uint8_t { kSame, kBool };

/// The elementwise op `name` (pattern elementwise) whose scalar functions `make` builds from
/// the attributes; inputs of the dtypes `accepts`.
void RegisterUnary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                   UnaryMaker make);
/// A unary op without attributes: its scalar function on doubles and in lang.
void RegisterUnary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                   double (*reference)(double), ir::Expr (*lang)(const ir::Expr&));
/// The OpDef of the broadcast binary op `name`; `same_dtype`: both operands must have one dtype.
OpDef BinaryOpDef(const std::string& name, DTypeClass accepts, OutDType out, bool same_dtype,
                  BinaryMaker make);
/// Registers BinaryOpDef(...).
void RegisterBinary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                    bool same_dtype, BinaryMaker make);
/// A binary op without attributes: its scalar function on doubles and in lang.
void RegisterBinary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                    bool same_dtype, double (*reference)(double, double),
                    ir::Expr (*lang)(const ir::Expr&, const ir::Expr&));

/// The special functions without one math call (digamma, polygamma, erfinv, erfcx, zeta, the
/// Bessel functions, igamma, ndtri, frexp, nextafter...; hlir/ops/special_functions.h),
/// registered by RegisterElementwiseOps.
void RegisterSpecialFunctionOps(OpRegistry& r);

/// `d` with dtype `t`.
TensorDesc WithDType(TensorDesc d, DType t);

}  // namespace cinn_like::hlir::ops
