/// \file The loop IR: expression and statement nodes, and the handles that hold them.
///
/// Invariants every pass keeps:
///  - Nodes are immutable once built; passes rebuild what they change and share the rest.
///  - A `Variable` is identified by its node, not its name: two Vars named "i" are different.
///  - Both operands of a binary node have the same type (Make widens an int32 operand met with
///    an int64 one, as index arithmetic lowered with 64-bit indices needs; any other mismatch
///    is an error); comparisons yield bool of the same
///    lane count. Integer `Div`/`Mod` truncate toward zero, as in C (x % y takes the sign of
///    x); passes rewrite them only where they prove the operands non-negative. Float `Div` is
///    IEEE division; float `Mod` is fmod.
///  - Integer arithmetic wraps on overflow (two's complement); indices are IndexType(): int32,
///    or int64 in code lowered for tensors that may pass 2^31 - 1 elements.
///  - A vector of N lanes is N independent scalar values; `Ramp(base, stride, N)` is the vector
///    base + k*stride for k in [0, N); `Broadcast(v, N)` repeats v.
///  - Before storage flattening a Load/Store holds one index per buffer dimension (row-major);
///    after it, exactly one flat element index.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/intrinsics.h"
#include "ir/node_list.h"
#include "ir/type.h"

namespace cinn_like::ir {

enum class IrNodeKind : uint8_t {
#define CINN_LIKE_DECLARE_KIND(name) k##name,
  CINN_LIKE_ALL_NODES(CINN_LIKE_DECLARE_KIND)
#undef CINN_LIKE_DECLARE_KIND
};

/// The kind's name, "Add", "For", ...
const char* KindName(IrNodeKind kind);

struct IrNode {
  explicit IrNode(IrNodeKind k) : kind(k) {}
  virtual ~IrNode() = default;
  const IrNodeKind kind;
};

struct ExprNode : IrNode {
  ExprNode(IrNodeKind k, Type t) : IrNode(k), type(t) {}
  const Type type;
};

struct StmtNode : IrNode {
  using IrNode::IrNode;
};

/// A shared, immutable expression. Converts implicitly from int (an int32 constant).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  Expr(int value);  // NOLINT: index constants are everywhere
  explicit Expr(int64_t value);
  explicit Expr(float value);
  explicit Expr(double value);

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  Type type() const { return node_->type; }
  IrNodeKind kind() const { return node_->kind; }
  /// Identity, not value equality (operator== builds an EQ node).
  bool same_as(const Expr& other) const { return node_ == other.node_; }

  /// The node as `T`, or null when it is another kind.
  template <typename T>
  const T* As() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const ExprNode> node_;
};

/// An integer constant of IndexType() (int32, or int64 under an IndexTypeScope): the sizes,
/// strides and offsets of index arithmetic, which may pass 2^31 - 1 in 64-bit code.
Expr IndexConst(int64_t value);

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  IrNodeKind kind() const { return node_->kind; }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }
  template <typename T>
  const T* As() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> node_;
};

// ---------------------------------------------------------------------------------------------
// Expressions

/// An integer (or bool) constant.
struct IntImm : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kIntImm;
  IntImm(Type t, int64_t v) : ExprNode(kKind, t), value(v) {}
  static Expr Make(Type t, int64_t v);
  const int64_t value;
};

/// A floating-point constant of any float type. float16 and bfloat16 constants are rounded to
/// their type when made (round to nearest even).
struct FloatImm : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kFloatImm;
  FloatImm(Type t, double v) : ExprNode(kKind, t), value(v) {}
  static Expr Make(Type t, double v);
  const double value;
};

/// A string literal; only as an argument of intrinsic calls (kernel names, messages).
struct StringImm : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kStringImm;
  explicit StringImm(std::string v) : ExprNode(kKind, StringType()), value(std::move(v)) {}
  static Expr Make(std::string v);
  const std::string value;
};

/// A named variable: a loop index, a symbolic dimension, or a scalar argument.
struct Variable : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kVariable;
  Variable(Type t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};

/// A variable handle: an Expr that is known to hold a Variable.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, Type type = IndexType());
  /// Wraps an Expr that must hold a Variable.
  explicit Var(const Expr& e);
  const Variable* operator->() const { return As<Variable>(); }
  const Variable* node() const { return As<Variable>(); }
  const std::string& name() const { return node()->name; }
};

/// Two operands of one type. Arithmetic yields that type; comparisons and logic yield bool
/// with the operands' lane count.
struct BinaryNode : ExprNode {
  BinaryNode(IrNodeKind k, Type t, Expr x, Expr y)
      : ExprNode(k, t), a(std::move(x)), b(std::move(y)) {}
  const Expr a, b;
};

#define CINN_LIKE_DECLARE_BINARY(name, sym)                                            \
  struct name : BinaryNode {                                                           \
    static constexpr IrNodeKind kKind = IrNodeKind::k##name;                           \
    name(Type t, Expr x, Expr y) : BinaryNode(kKind, t, std::move(x), std::move(y)) {} \
    static Expr Make(Expr a, Expr b);                                                  \
  };
CINN_LIKE_BINARY_NODES(CINN_LIKE_DECLARE_BINARY)
#undef CINN_LIKE_DECLARE_BINARY

/// Logical negation of a bool.
struct Not : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kNot;
  Not(Type t, Expr x) : ExprNode(kKind, t), a(std::move(x)) {}
  static Expr Make(Expr a);
  const Expr a;
};

/// `cond ? t : f`; both branches are evaluated (no side effects in expressions).
struct Select : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kSelect;
  Select(Type t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t),
        cond(std::move(c)),
        true_value(std::move(x)),
        false_value(std::move(y)) {}
  static Expr Make(Expr cond, Expr t, Expr f);
  const Expr cond, true_value, false_value;
};

/// Conversion to `type`. Float to int truncates toward zero; int to narrower int wraps.
struct Cast : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kCast;
  Cast(Type t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  static Expr Make(Type t, Expr v);
  const Expr value;
};

/// Where a buffer lives. Global is a function argument or heap memory; shared and local are
/// GPU on-chip memories (block-shared, per-thread registers).
enum class MemoryScope : uint8_t { kGlobal, kShared, kLocal };

/// A named, typed, multi-dimensional (row-major, dense) array.
struct BufferNode {
  std::string name;
  Type dtype;
  std::vector<Expr> shape;
  MemoryScope scope = MemoryScope::kGlobal;
  /// The buffer's base address as a Handle-typed variable, for code that passes the buffer
  /// itself (kernel launch arguments).
  Var data;
  /// The lang tensor (ir/tensor.h) that defines this buffer, if any; opaque at this level.
  std::weak_ptr<void> defining_tensor;
  /// Set by the group scheduler (GPUs): one reduction reads this buffer, each element once, and
  /// nothing else does. Device code generators load it with an evict-first cache hint (CUDA
  /// `__ldcs`) in kernels that do not write it, leaving the caches to data that is read again
  /// (Inductor's evict_first). A hint: code is correct either way.
  bool read_once = false;
};
using Buffer = std::shared_ptr<BufferNode>;
Buffer MakeBuffer(std::string name, Type dtype, std::vector<Expr> shape,
                  MemoryScope scope = MemoryScope::kGlobal);

/// Reads one element (scalar indices) or several (a vector index) from a buffer.
struct Load : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kLoad;
  Load(Type t, Buffer b, std::vector<Expr> idx)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(idx)) {}
  static Expr Make(Buffer buffer, std::vector<Expr> indices);
  const Buffer buffer;
  const std::vector<Expr> indices;
};

/// The vector base + k * stride, k in [0, lanes).
struct Ramp : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kRamp;
  Ramp(Type t, Expr b, Expr s, int l)
      : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  static Expr Make(Expr base, Expr stride, int lanes);
  const Expr base, stride;
  const int lanes;
};

/// A scalar repeated in every lane.
struct Broadcast : ExprNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kBroadcast;
  Broadcast(Type t, Expr v, int l) : ExprNode(kKind, t), value(std::move(v)), lanes(l) {}
  static Expr Make(Expr value, int lanes);
  const Expr value;
  const int lanes;
};

/// A call. `kPure` calls are math functions of their arguments, named by their IR name (exp,
/// sqrt: ir/math.h); `kIntrinsic` calls are the operations of ir/intrinsics.h, which the
/// backends implement themselves and which may have effects: `intrinsic` says which one, and
/// `name` is its list name.
struct Call : ExprNode {
  enum class CallKind : uint8_t { kPure, kIntrinsic };
  static constexpr IrNodeKind kKind = IrNodeKind::kCall;
  Call(Type t, std::string n, std::vector<Expr> a, std::optional<IntrinsicOp> i)
      : ExprNode(kKind, t),
        name(std::move(n)),
        args(std::move(a)),
        call_kind(i ? CallKind::kIntrinsic : CallKind::kPure),
        intrinsic(i) {}
  /// A math call (kPure) of the op named `name`.
  static Expr Make(Type t, std::string name, std::vector<Expr> args);
  /// An intrinsic call (kIntrinsic).
  static Expr Make(Type t, IntrinsicOp op, std::vector<Expr> args);
  /// The same call (kind, name, intrinsic) on other arguments, of type `t`.
  Expr WithArgs(Type t, std::vector<Expr> new_args) const;
  bool is_intrinsic(IntrinsicOp op) const { return intrinsic == op; }
  const std::string name;
  const std::vector<Expr> args;
  const CallKind call_kind;
  const std::optional<IntrinsicOp> intrinsic;  // set exactly for kIntrinsic calls
};

// ---------------------------------------------------------------------------------------------
// Statements

/// buffer[indices] = value. A vector index stores every lane.
struct Store : StmtNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kStore;
  Store(Buffer b, std::vector<Expr> idx, Expr v)
      : StmtNode(kKind), buffer(std::move(b)), indices(std::move(idx)), value(std::move(v)) {}
  static Stmt Make(Buffer buffer, std::vector<Expr> indices, Expr value);
  const Buffer buffer;
  const std::vector<Expr> indices;
  const Expr value;
};

/// How a loop runs. Bound loops are GPU grid/block axes: the loop variable is the thread
/// index and the extent is the launch dimension; they survive only in device code.
enum class ForKind : uint8_t {
  kSerial,
  kParallel,    // iterations run on the CPU thread pool, in any order
  kVectorized,  // the body becomes vector code over the (constant) extent
  kUnrolled,    // the body is repeated for each (constant) iteration
  kUnrollHint,  // a serial loop the backend unrolls (#pragma unroll, LLVM's unroll hint)
  kGpuBlock,    // bound to blockIdx.{x,y,z}
  kGpuThread,   // bound to threadIdx.{x,y,z}
};
const char* ForKindName(ForKind kind);

/// for (loop_var = min; loop_var < min + extent; ++loop_var) body
struct For : StmtNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kFor;
  For(Var v, Expr mn, Expr ext, ForKind k, int axis, Stmt b)
      : StmtNode(kKind),
        loop_var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        bind_axis(axis),
        body(std::move(b)) {}
  static Stmt Make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
                   int bind_axis = -1);
  const Var loop_var;
  const Expr min, extent;
  const ForKind for_kind;
  const int bind_axis;  // 0, 1, 2 for x, y, z when bound to the GPU; -1 otherwise
  const Stmt body;
};

/// if (cond) then_case else else_case; else_case may be undefined.
struct IfThenElse : StmtNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kIfThenElse;
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  static Stmt Make(Expr cond, Stmt then_case, Stmt else_case = Stmt());
  const Expr cond;
  const Stmt then_case, else_case;
};

/// Statements run in order.
struct Block : StmtNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kBlock;
  explicit Block(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  /// Flattens nested blocks; a single statement is returned as is.
  static Stmt Make(std::vector<Stmt> stmts);
  const std::vector<Stmt> stmts;
};

/// Evaluates an expression for its effect (an intrinsic call).
struct Evaluate : StmtNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kEvaluate;
  explicit Evaluate(Expr v) : StmtNode(kKind), value(std::move(v)) {}
  static Stmt Make(Expr value);
  const Expr value;
};

/// Makes `buffer` exist (in its scope) for the duration of body; contents start undefined.
struct Allocate : StmtNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kAllocate;
  Allocate(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  static Stmt Make(Buffer buffer, Stmt body);
  const Buffer buffer;
  const Stmt body;
};

/// let var = value in body: value is evaluated once, before body, and var names it inside
/// body only (var is immutable; each Variable is bound by at most one LetStmt or loop).
struct LetStmt : StmtNode {
  static constexpr IrNodeKind kKind = IrNodeKind::kLetStmt;
  LetStmt(Var v, Expr x, Stmt b)
      : StmtNode(kKind), var(std::move(v)), value(std::move(x)), body(std::move(b)) {}
  static Stmt Make(Var var, Expr value, Stmt body);
  const Var var;
  const Expr value;
  const Stmt body;
};

// ---------------------------------------------------------------------------------------------
// Building expressions. Mixed int/float operands: a constant adopts the other operand's type;
// otherwise the types must already agree.

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr operator-(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);

/// A constant of type t (int or float); an integer one is `value` truncated and wrapped into
/// int64 (WrapToInt64).
Expr MakeConst(Type t, double value);
/// `v` truncated and wrapped modulo 2^64 into int64, as a C cast from a wider integer would; 0 for
/// NaN and +-inf (a plain cast of those, or of a value past int64, is undefined).
int64_t WrapToInt64(double v);
/// The constant's value if `e` is an IntImm.
const int64_t* AsConstInt(const Expr& e);
bool IsConstInt(const Expr& e, int64_t value);

}  // namespace cinn_like::ir
