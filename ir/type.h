/// \file Scalar and vector value types of the loop IR.
#pragma once

#include <cstdint>
#include <string>

namespace cinn_like::ir {

/// A value type: a scalar kind, its width in bits, and a lane count (1 for scalars).
/// `Handle` is an opaque pointer (a buffer's base address) and has no arithmetic.
/// Floating point comes in two codes: kFloat is IEEE binary16/32/64 (float16 is IEEE half);
/// kBFloat is bfloat16 (float32's exponent, 7 mantissa bits). Both count as is_float().
class Type {
 public:
  enum class Code : uint8_t { kInt, kUInt, kFloat, kBFloat, kBool, kHandle, kString, kVoid };

  constexpr Type() = default;
  constexpr Type(Code code, int bits, int lanes = 1) : code_(code), bits_(bits), lanes_(lanes) {}

  Code code() const { return code_; }
  int bits() const { return bits_; }
  int lanes() const { return lanes_; }
  /// Bytes of one element (one lane).
  int bytes() const { return (bits_ + 7) / 8; }

  bool is_int() const { return code_ == Code::kInt; }
  bool is_uint() const { return code_ == Code::kUInt; }
  /// Any floating-point type: IEEE float16/32/64 or bfloat16.
  bool is_float() const { return code_ == Code::kFloat || code_ == Code::kBFloat; }
  bool is_float16() const { return code_ == Code::kFloat && bits_ == 16; }
  bool is_bfloat16() const { return code_ == Code::kBFloat && bits_ == 16; }
  /// float16 or bfloat16: storage types whose arithmetic the backends do in float32,
  /// rounding each result back (round to nearest even).
  bool is_low_precision_float() const { return is_float16() || is_bfloat16(); }
  bool is_bool() const { return code_ == Code::kBool; }
  bool is_handle() const { return code_ == Code::kHandle; }
  bool is_string() const { return code_ == Code::kString; }
  bool is_void() const { return code_ == Code::kVoid; }
  /// Integers of either signedness (not bool).
  bool is_integer() const { return is_int() || is_uint(); }
  bool is_scalar() const { return lanes_ == 1; }
  bool is_vector() const { return lanes_ > 1; }

  /// The same element type with `lanes` lanes.
  Type WithLanes(int lanes) const { return Type(code_, bits_, lanes); }
  Type ElementOf() const { return WithLanes(1); }

  bool operator==(const Type& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }

  /// "float32", "int64", "float32x8", "float16", "bfloat16", "bool", "handle".
  std::string ToString() const;

 private:
  Code code_ = Code::kVoid;
  int bits_ = 0;
  int lanes_ = 1;
};

inline Type Int(int bits, int lanes = 1) { return Type(Type::Code::kInt, bits, lanes); }
inline Type UInt(int bits, int lanes = 1) { return Type(Type::Code::kUInt, bits, lanes); }
inline Type Float(int bits, int lanes = 1) { return Type(Type::Code::kFloat, bits, lanes); }
inline Type Float16(int lanes = 1) { return Float(16, lanes); }
inline Type BFloat16(int lanes = 1) { return Type(Type::Code::kBFloat, 16, lanes); }
inline Type Bool(int lanes = 1) { return Type(Type::Code::kBool, 1, lanes); }
inline Type Handle() { return Type(Type::Code::kHandle, 64); }
inline Type StringType() { return Type(Type::Code::kString, 0); }
inline Type Void() { return Type(Type::Code::kVoid, 0); }
/// The type of loop variables, shape constants and symbolic dimensions: int32, or int64 while
/// an IndexTypeScope of int64 is open on this thread (code whose tensors may pass 2^31 - 1
/// elements is lowered in one; int32 is faster on GPUs and the default).
Type IndexType();

/// The most elements a tensor indexed with `index_type` may have: 2^31 - 1 for int32; 2^48
/// for int64 (far past any memory, and its byte sizes never overflow int64).
inline int64_t MaxIndexedElements(Type index_type) {
  return index_type.bits() == 64 ? int64_t{1} << 48 : int64_t{2147483647};
}

/// Makes IndexType() `t` (Int(32) or Int(64)) on this thread until destroyed.
class IndexTypeScope {
 public:
  explicit IndexTypeScope(Type t);
  ~IndexTypeScope();
  IndexTypeScope(const IndexTypeScope&) = delete;
  IndexTypeScope& operator=(const IndexTypeScope&) = delete;

 private:
  Type saved_;
};

}  // namespace cinn_like::ir
