/// \file CodeGenC: prints loop IR as C source. Source backends (CUDA) derive from it and
/// override what differs: types, loop bindings, memory scopes, special values.
#pragma once

#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "ir/ir.h"
#include "ir/math.h"
#include "ir/visitor.h"

namespace cinn_like::backends {

/// The C math function of `op` for float64 ("exp", "fabs"); float32 appends "f".
const char* CMathName(ir::MathOp op);

class CodeGenC : protected ir::IRVisitor {
 public:
  virtual ~CodeGenC() = default;

 protected:
  /// The C spelling of a scalar type (int32_t, float, ...); vectors are an error recorded in
  /// status_.
  virtual std::string TypeName(const ir::Type& t);
  /// The language named in errors: "C", "CUDA".
  virtual const char* Language() const { return "C"; }
  /// A float constant (handles infinities and NaN).
  virtual std::string FloatLiteral(const ir::Type& t, double v);
  /// `__shared__ ` and the like before a local array of the scope.
  virtual std::string ScopePrefix(ir::MemoryScope scope) { return ""; }
  /// float16/bfloat16 arithmetic, comparisons and math are computed in float32: an operand is
  /// widened (exact) and each result narrowed back, rounding to nearest even. This equals
  /// native 16-bit arithmetic for + - * / (float32 holds more than 2p+2 bits of a 16-bit
  /// type) and matches the LLVM backend bit for bit. The base class has no 16-bit floats.
  virtual std::string WidenToFloat(const ir::Type& t, const std::string& e);
  virtual std::string NarrowFromFloat(const ir::Type& t, const std::string& e);
  /// The function that computes math op `op` on the compute type `t` (float32/float64);
  /// the base class uses the C name (CMathName: "expf", "exp").
  virtual std::string MathFunctionName(ir::MathOp op, const ir::Type& t);
  /// fast_recip(x) on the compute type `t`: `(1.0f / x)` in the base class.
  virtual std::string Reciprocal(const ir::Type& t, const std::string& x);
  /// How an intrinsic call is spelled: the function a call of `op` prints as, or nullptr when
  /// this language has no such operation (an error naming the intrinsic). The base class
  /// spells none.
  virtual const char* IntrinsicFunctionName(ir::IntrinsicOp op) { return nullptr; }
  /// Whether fast, less accurate math spellings are allowed.
  virtual bool FastMath() const { return false; }
  /// Prints a bound For; the base class has no GPU and records an error.
  virtual void PrintBoundFor(const ir::For* op);
  /// A store of a vector value, or of a scalar reduced from vectors (vector_reduce): VisitStore
  /// sends those here. The base class prints it as a scalar store (which refuses vectors).
  virtual void PrintVectorStore(const ir::Store* op) { PrintScalarStore(op); }
  /// `buf[i] = value;` of a scalar value and flat index.
  void PrintScalarStore(const ir::Store* op);
  /// Prints `const T cse_<n> = ...;` for each subexpression of the scalar `e` worth computing
  /// once (backends/common_subexpressions.h) and returns `e` reading those temporaries.
  ir::Expr PrintCommonSubexpressions(const ir::Expr& e);
  /// The element type of a buffer in memory (a local array's): TypeName by default.
  virtual std::string MemoryTypeName(const ir::Type& t) { return TypeName(t); }

  // For GPU-like printers.
  /// A loop bound to a GPU axis as `<type> v = <index>;` and its body, which is guarded by
  /// `if (v < extent)` only where the extent is not `launch`, the kernel's launch dim.
  void PrintBoundLoop(const ir::For* op, const ir::Expr& launch, const std::string& index);
  /// Records an error when a cross-thread reduction (`what`) sits under a guarded bound loop:
  /// every thread of the block must reach it.
  void CheckEveryThreadReaches(const std::string& kernel, const std::string& what);
  /// The elements of `b`, or -1 when a dim is not a constant.
  static int64_t ConstantElements(const ir::Buffer& b);

  /// `e` as C with the fewest parentheses that keep the IR's structure.
  std::string Print(const ir::Expr& e);
  /// `e` as the operand of an operator of precedence `prec`; `right` for a right operand,
  /// which needs parentheses at equal precedence too (C operators associate left).
  std::string PrintOperand(const ir::Expr& e, int prec, bool right = false);
  void PrintStmt(const ir::Stmt& s);
  void Indent() { out_ << std::string(2 * indent_, ' '); }
  void Nested(const ir::Stmt& s) {
    ++indent_;
    PrintStmt(s);
    --indent_;
  }
  /// Records the first error; printing goes on so the rest is still readable in dumps.
  void Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
  }

  using ir::IRVisitor::Visit;
#define CINN_LIKE_DECLARE_VISIT(name) void Visit##name(const ir::name* op) override;
  CINN_LIKE_ALL_NODES(CINN_LIKE_DECLARE_VISIT)
#undef CINN_LIKE_DECLARE_VISIT

  std::ostringstream out_;              // the whole translation unit
  std::ostringstream* expr_ = nullptr;  // where expressions print
  int indent_ = 0;
  absl::Status status_;
  /// A philox_uniform call was printed: the unit must define the helper of philox_source.h.
  bool uses_philox_ = false;
  /// A maximum or minimum call was printed: the helpers of nan_extremes_source.h.
  bool uses_nan_extremes_ = false;
  int cse_count_ = 0;  // temporaries PrintCommonSubexpressions has named
  // Enclosing thread-bound loops printed with an `if (v < extent)` (a block index's guard
  // holds for all of a block's threads alike).
  int guarded_bound_loops_ = 0;

 private:
  void PrintBinary(const ir::BinaryNode* op, const char* sym, int prec);
  void PrintBinaryCall(const ir::BinaryNode* op, const std::string& fn);
  void CheckScalar(const ir::Type& t, const char* what);
};

}  // namespace cinn_like::backends
