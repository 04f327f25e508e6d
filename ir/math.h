/// \file Math functions of the IR: the one table of every math op with its spelling in each
/// backend, and the lang helpers (Exp, Log, ...) that build the call for an operand's type.
///
/// A math op is a `Call` of kind kPure named by the op's IR name ("exp"); its arguments and
/// result share one floating-point type. float16 and bfloat16 operands are computed in
/// float32 and the result rounded back to nearest even, on every backend.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "ir/ir.h"

namespace cinn_like::ir {

// X(Op, ir name, arity, C name, LLVM lowering, CUDA fast-math float32 spelling)
//  - C name: the C/CUDA math function for float64; float32 appends "f" (expf).
//  - LLVM lowering: "llvm.<x>" is an LLVM intrinsic overloaded on the type (vectors too);
//    a bare name is a libm symbol (float32 appends "f"), called lane by lane and resolved in
//    the ORC JIT from the process; "" is open-coded (rsqrt is 1 / sqrt).
//  - Fast-math spelling: what CUDA uses for float32 when FLAGS_cinn_like_fast_math is on;
//    nullptr keeps the C name. rsqrt without fast math is `1.0f / sqrtf(x)` (rsqrtf is 2 ulp).
#define CINN_LIKE_MATH_OPS(X)                                          \
  X(Exp, "exp", 1, "exp", "llvm.exp", "__expf")                        \
  X(Exp2, "exp2", 1, "exp2", "llvm.exp2", nullptr)                     \
  X(Expm1, "expm1", 1, "expm1", "expm1", nullptr)                      \
  X(Log, "log", 1, "log", "llvm.log", "__logf")                        \
  X(Log2, "log2", 1, "log2", "llvm.log2", "__log2f")                   \
  X(Log10, "log10", 1, "log10", "llvm.log10", "__log10f")              \
  X(Log1p, "log1p", 1, "log1p", "log1p", nullptr)                      \
  X(Sqrt, "sqrt", 1, "sqrt", "llvm.sqrt", nullptr)                     \
  X(Rsqrt, "rsqrt", 1, "rsqrt", "", "rsqrtf")                          \
  X(Cbrt, "cbrt", 1, "cbrt", "cbrt", nullptr)                          \
  X(Sin, "sin", 1, "sin", "llvm.sin", "__sinf")                        \
  X(Cos, "cos", 1, "cos", "llvm.cos", "__cosf")                        \
  X(Tan, "tan", 1, "tan", "tan", "__tanf")                             \
  X(Asin, "asin", 1, "asin", "asin", nullptr)                          \
  X(Acos, "acos", 1, "acos", "acos", nullptr)                          \
  X(Atan, "atan", 1, "atan", "atan", nullptr)                          \
  X(Sinh, "sinh", 1, "sinh", "sinh", nullptr)                          \
  X(Cosh, "cosh", 1, "cosh", "cosh", nullptr)                          \
  X(Tanh, "tanh", 1, "tanh", "tanh", nullptr)                          \
  X(Asinh, "asinh", 1, "asinh", "asinh", nullptr)                      \
  X(Acosh, "acosh", 1, "acosh", "acosh", nullptr)                      \
  X(Atanh, "atanh", 1, "atanh", "atanh", nullptr)                      \
  X(Erf, "erf", 1, "erf", "erf", nullptr)                              \
  X(Erfc, "erfc", 1, "erfc", "erfc", nullptr)                          \
  X(Lgamma, "lgamma", 1, "lgamma", "lgamma", nullptr)                  \
  X(Tgamma, "tgamma", 1, "tgamma", "tgamma", nullptr)                  \
  X(Abs, "abs", 1, "fabs", "llvm.fabs", nullptr)                       \
  X(Floor, "floor", 1, "floor", "llvm.floor", nullptr)                 \
  X(Ceil, "ceil", 1, "ceil", "llvm.ceil", nullptr)                     \
  X(Round, "round", 1, "round", "llvm.round", nullptr)                 \
  X(Trunc, "trunc", 1, "trunc", "llvm.trunc", nullptr)                 \
  X(Rint, "rint", 1, "rint", "llvm.rint", nullptr)                     \
  X(Nearbyint, "nearbyint", 1, "nearbyint", "llvm.nearbyint", nullptr) \
  X(Pow, "pow", 2, "pow", "llvm.pow", "__powf")                        \
  X(Atan2, "atan2", 2, "atan2", "atan2", nullptr)                      \
  X(Fmod, "fmod", 2, "fmod", "fmod", nullptr)                          \
  X(Hypot, "hypot", 2, "hypot", "hypot", nullptr)                      \
  X(Copysign, "copysign", 2, "copysign", "llvm.copysign", nullptr)     \
  X(Fmin, "fmin", 2, "fmin", "llvm.minnum", nullptr)                   \
  X(Fmax, "fmax", 2, "fmax", "llvm.maxnum", nullptr)                   \
  X(Fma, "fma", 3, "fma", "llvm.fma", nullptr)

enum class MathOp : uint8_t {
#define CINN_LIKE_MATH_ENUM(op, name, arity, c, llvm, fast) k##op,
  CINN_LIKE_MATH_OPS(CINN_LIKE_MATH_ENUM)
#undef CINN_LIKE_MATH_ENUM
};

/// One row of the table.
struct MathOpInfo {
  MathOp op;
  const char* name;  // the IR name, "exp"
  int arity;
  const char* c_name;    // float64 C/CUDA name; float32 appends "f"
  const char* llvm;      // "llvm.exp" intrinsic, "tanh" libm base name, "" open-coded
  const char* fast_f32;  // CUDA float32 spelling under fast math, or nullptr
};

const MathOpInfo& GetMathOpInfo(MathOp op);
/// The op of a call name: the IR name ("exp"), the C name ("fabs") or the C float32 spelling
/// ("expf"); nullopt when unknown.
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

/// Checks every math call stored by `body`: a known op, its arity, a floating-point type
/// shared by arguments and result. Errors read "function <func>: tensor <T>: math function
/// erf takes a floating-point type (float16, bfloat16, float32, float64), got int32".
absl::Status CheckMathCalls(const std::string& func, const Stmt& body);

}  // namespace cinn_like::ir
