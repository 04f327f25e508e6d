/// \file Math functions of the IR: the one list of math ops (name and arity), and the lang
/// helpers (Exp, Log, ...) that build the call for an operand's type. How each backend spells
/// or lowers an op is the backend's (backends/codegen_c.cc, backends/cuda, backends/llvm).
///
/// A math op is a `Call` of kind kPure named by the op's IR name ("exp"); its arguments and
/// result share one floating-point type. float16 and bfloat16 operands are computed in
/// float32 and the result rounded back to nearest even, on every backend.
///
/// Two ops are approximations for values that are then rounded to a 16-bit float, where an
/// error far below that rounding's (2^-11 of the value for float16, 2^-8 for bfloat16) does not
/// show; ops choose them only for 16-bit outputs (hlir/ops/elementwise_def.h, `rounded16`):
///  - fast_exp(x): e^x within a relative error of 2^-16 where the result is a normal float32
///    (CUDA's __expf: 2 + 1.173|x| ulps); exp on backends without a faster form.
///  - fast_recip(x): 1 / x within 2 ulps over the whole range, subnormal results included (CUDA's
///    rcp.approx.f32); 1 / x on backends without a faster form.
///
/// maximum(a, b) and minimum(a, b) are NaN when either operand is (PyTorch's max and min,
/// LLVM's llvm.maximum); fmax and fmin give the other operand (C's). The float reductions' max
/// and min combine with them (ir/tensor.cc ReduceCombine), so a row's NaN is found in the one
/// pass that finds its extreme.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace cinn_like::ir {

// X(Op, IR name, arity)
// clang-format off
#define CINN_LIKE_MATH_OPS(X)                                                                  \
  X(Exp, "exp", 1) X(Exp2, "exp2", 1) X(Expm1, "expm1", 1) X(Log, "log", 1)                    \
  X(Log2, "log2", 1) X(Log10, "log10", 1) X(Log1p, "log1p", 1) X(Sqrt, "sqrt", 1)              \
  X(Rsqrt, "rsqrt", 1) X(Cbrt, "cbrt", 1) X(Sin, "sin", 1) X(Cos, "cos", 1) X(Tan, "tan", 1)   \
  X(Asin, "asin", 1) X(Acos, "acos", 1) X(Atan, "atan", 1) X(Sinh, "sinh", 1)                  \
  X(Cosh, "cosh", 1) X(Tanh, "tanh", 1) X(Asinh, "asinh", 1) X(Acosh, "acosh", 1)              \
  X(Atanh, "atanh", 1) X(Erf, "erf", 1) X(Erfc, "erfc", 1) X(Lgamma, "lgamma", 1)              \
  X(Tgamma, "tgamma", 1) X(Abs, "abs", 1) X(Floor, "floor", 1) X(Ceil, "ceil", 1)              \
  X(Round, "round", 1) X(Trunc, "trunc", 1) X(Rint, "rint", 1) X(Nearbyint, "nearbyint", 1)    \
  X(Pow, "pow", 2) X(Atan2, "atan2", 2) X(Fmod, "fmod", 2) X(Hypot, "hypot", 2)                \
  X(Copysign, "copysign", 2) X(Fmin, "fmin", 2) X(Fmax, "fmax", 2) X(Fma, "fma", 3)          \
  X(FastExp, "fast_exp", 1) X(FastRecip, "fast_recip", 1) X(Maximum, "maximum", 2)            \
  X(Minimum, "minimum", 2)
// clang-format on

enum class MathOp : uint8_t {
#define CINN_LIKE_MATH_ENUM(op, name, arity) k##op,
  CINN_LIKE_MATH_OPS(CINN_LIKE_MATH_ENUM)
#undef CINN_LIKE_MATH_ENUM
};

/// How many math ops the list has (MathOp values are 0 .. kNumMathOps - 1).
inline constexpr size_t kNumMathOps = 0
#define CINN_LIKE_MATH_COUNT(op, name, arity) +1
    CINN_LIKE_MATH_OPS(CINN_LIKE_MATH_COUNT)
#undef CINN_LIKE_MATH_COUNT
    ;

/// True when a backend's table keyed by MathOp has one row per op in enum order (row `k` has
/// `op == MathOp(k)`); backends check their tables with it in a static_assert.
template <typename Row, size_t N>
constexpr bool CoversEveryMathOp(const Row (&rows)[N]) {
  if (N != kNumMathOps) return false;
  for (size_t k = 0; k < N; ++k) {
    if (static_cast<size_t>(rows[k].op) != k) return false;
  }
  return true;
}

/// One row of the list.
struct MathOpInfo {
  MathOp op;
  const char* name;  // the IR name, "exp"
  int arity;
};

const MathOpInfo& GetMathOpInfo(MathOp op);
/// The op of an IR name ("exp"); nullopt when unknown.
std::optional<MathOp> MathOpFromName(const std::string& name);
/// The type math ops compute in for operands of type `t`: float32 (same lanes) for float16
/// and bfloat16, `t` itself otherwise.
Type MathComputeType(const Type& t);

/// The call of `op` on `args`, typed as the first argument (scalar constants among the other
/// arguments adopt that type). Type errors are reported by Lower (CheckMathCalls) and by the
/// backends, with the function and tensor at fault.
Expr MathCall(MathOp op, std::vector<Expr> args);
Expr Exp(Expr x);
Expr Log(Expr x);
Expr Tanh(Expr x);
Expr Erf(Expr x);
Expr Sqrt(Expr x);
Expr Rsqrt(Expr x);
Expr Pow(Expr x, Expr y);
Expr FastExp(Expr x);
Expr FastRecip(Expr x);

/// Checks every math call stored by `body`: a known op, its arity, a floating-point type
/// shared by arguments and result. Errors read "function <func>: tensor <T>: math function
/// erf takes a floating-point type (float16, bfloat16, float32, float64), got int32".
absl::Status CheckMathCalls(const std::string& func, const Stmt& body);

}  // namespace cinn_like::ir
