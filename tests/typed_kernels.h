/// \file Typed elementwise kernels (lang + schedule) and host float16/bfloat16 helpers shared
/// by the x86, CUDA codegen and GPU type tests. The host conversions here are written
/// independently of the compiler's (ir/float16.h): float16 through GCC's _Float16, bfloat16
/// by comparing the two neighbours in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/lower.h"
#include "ir/math.h"
#include "ir/schedule.h"
#include "ir/tensor.h"

namespace cinn_like::testing {

/// float16 bits of `v`, rounded once to nearest even.
inline uint16_t HalfBits(double v) {
  _Float16 h = static_cast<_Float16>(v);
  uint16_t b;
  std::memcpy(&b, &h, sizeof(b));
  return b;
}
inline double HalfValue(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, sizeof(b));
  return static_cast<double>(h);
}

inline double BFloat16Value(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}
/// bfloat16 bits of non-NaN `v`, rounded once to nearest even.
inline uint16_t BFloat16Bits(double v) {
  if (std::isinf(v)) return v > 0 ? 0x7f80 : 0xff80;
  float t = static_cast<float>(v);  // then truncate toward zero
  if (std::fabs(static_cast<double>(t)) > std::fabs(v)) t = std::nextafter(t, 0.0f);
  uint32_t x;
  std::memcpy(&x, &t, sizeof(x));
  uint16_t lo = static_cast<uint16_t>(x >> 16), hi = static_cast<uint16_t>(lo + 1);
  double dlo = std::fabs(v - BFloat16Value(lo)), dhi = std::fabs(BFloat16Value(hi) - v);
  if (dlo < dhi || (dlo == dhi && (lo & 1) == 0)) return lo;
  return hi;
}

/// Each element of type `t` as a double, from its stored bits (16-bit floats) or value.
inline double RoundTo(const ir::Type& t, double v) {
  if (t.is_float16()) return HalfValue(HalfBits(v));
  if (t.is_bfloat16()) return BFloat16Value(BFloat16Bits(v));
  if (t == ir::Float(32)) return static_cast<float>(v);
  return v;
}

/// The edges of float literal printing that hold exactly in `t`: the largest finite value and
/// its negation, the smallest normal and denormal, of float16, bfloat16, float32 and float64
/// alike (each where `t` holds it exactly), a third and a tenth rounded to `t`, -0, +-inf, NaN.
inline std::vector<double> FloatLiteralEdges(const ir::Type& t) {
  std::vector<double> all = {65504,
                             std::ldexp(1, -14),
                             std::ldexp(1, -24),
                             BFloat16Value(0x7f7f),
                             std::ldexp(1, -133),
                             std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::min(),
                             std::numeric_limits<float>::denorm_min(),
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::denorm_min()};
  std::vector<double> edges;
  for (double v : all) {
    if (RoundTo(t, v) != v) continue;
    edges.push_back(v);
    edges.push_back(-v);
  }
  for (double v : {1.0 / 3, 0.1}) edges.push_back(RoundTo(t, v));
  for (double v :
       {-0.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()}) {
    edges.push_back(v);
  }
  return edges;
}

/// Whether `got` is `want` bit for bit as a value: the same sign of zero, NaN for NaN.
inline bool SameFloat(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

/// The DLPack dtype of `t`.
inline DLDataType DLType(const ir::Type& t) {
  if (t.is_bool()) return {6, 8, 1};  // kDLBool
  if (t.is_bfloat16()) return {kDLBfloat, 16, 1};
  if (t.is_float()) return {kDLFloat, static_cast<uint8_t>(t.bits()), 1};
  return {static_cast<uint8_t>(t.is_int() ? kDLInt : kDLUInt), static_cast<uint8_t>(t.bits()), 1};
}

/// A dense CPU tensor of any scalar type, with element access as double and a DLTensor view.
class TypedTensor {
 public:
  TypedTensor(ir::Type type, std::vector<int64_t> shape) : type_(type), shape_(std::move(shape)) {
    for (auto d : shape_) size_ *= d;
    bytes_.assign(size_ * type_.bytes(), 0);
    tensor_.data = bytes_.data();
    tensor_.device = {kDLCPU, 0};
    tensor_.ndim = static_cast<int32_t>(shape_.size());
    tensor_.dtype = DLType(type_);
    tensor_.shape = shape_.data();
  }
  TypedTensor(const TypedTensor&) = delete;
  TypedTensor& operator=(const TypedTensor&) = delete;

  DLTensor* dl() { return &tensor_; }
  void* data() { return bytes_.data(); }
  size_t bytes() const { return bytes_.size(); }
  int64_t size() const { return size_; }
  const ir::Type& type() const { return type_; }

  /// Stores `v` as the element type: 16-bit floats round to nearest even, integers convert
  /// (wrapping), bool is v != 0.
  void Set(int64_t i, double v) {
    char* p = bytes_.data() + i * type_.bytes();
    if (type_.is_float16()) return Put(p, HalfBits(v));
    if (type_.is_bfloat16()) return Put(p, BFloat16Bits(v));
    if (type_ == ir::Float(32)) return Put(p, static_cast<float>(v));
    if (type_ == ir::Float(64)) return Put(p, v);
    if (type_.is_bool()) return Put(p, static_cast<uint8_t>(v != 0));
    uint64_t bits = static_cast<uint64_t>(ir::WrapToInt64(v));  // defined past int64 too
    std::memcpy(p, &bits, type_.bytes());                       // little endian: the low bytes wrap
  }
  double Get(int64_t i) const {
    const char* p = bytes_.data() + i * type_.bytes();
    if (type_.is_float16()) return HalfValue(Take<uint16_t>(p));
    if (type_.is_bfloat16()) return BFloat16Value(Take<uint16_t>(p));
    if (type_ == ir::Float(32)) return Take<float>(p);
    if (type_ == ir::Float(64)) return Take<double>(p);
    if (type_.is_bool()) return Take<uint8_t>(p);
    if (type_.is_uint()) {
      uint64_t bits = 0;
      std::memcpy(&bits, p, type_.bytes());
      return static_cast<double>(bits);
    }
    switch (type_.bits()) {
      case 8:
        return Take<int8_t>(p);
      case 16:
        return Take<int16_t>(p);
      case 32:
        return Take<int32_t>(p);
      default:
        return static_cast<double>(Take<int64_t>(p));
    }
  }
  /// Uniform values in [lo, hi] (integers: whole numbers) from a fresh seed.
  void FillRandom(double lo, double hi) {
    static std::random_device rd;
    std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
    std::uniform_real_distribution<double> real(lo, hi);
    std::uniform_int_distribution<int64_t> whole(static_cast<int64_t>(lo),
                                                 static_cast<int64_t>(hi));
    for (int64_t i = 0; i < size_; ++i) {
      Set(i, type_.is_float() ? real(rng) : static_cast<double>(whole(rng)));
    }
  }

 private:
  template <typename T>
  static void Put(char* p, T v) {
    std::memcpy(p, &v, sizeof(T));
  }
  template <typename T>
  static T Take(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  ir::Type type_;
  std::vector<int64_t> shape_;
  int64_t size_ = 1;
  std::vector<char> bytes_;
  DLTensor tensor_{};
};

using BinaryFn = std::function<ir::Expr(ir::Expr, ir::Expr)>;

/// name(A, B, C): C[i, j] = f(A[i, j], B[i, j]) over shape {m, 16} (m symbolic); A and B of
/// type `in`, C of f's result type. On NVGPU i is bound to blockIdx.x and j to threadIdx.x; on x86
/// `vector_lanes` > 1 vectorizes j by that factor.
inline absl::StatusOr<ir::LoweredFunc> BuildBinary(const std::string& name, ir::Type in,
                                                   const BinaryFn& f, const ir::Target& target,
                                                   int vector_lanes = 0) {
  ir::Var m("m");
  ir::Tensor a = ir::Placeholder("A", in, {m, ir::Expr(16)});
  ir::Tensor b = ir::Placeholder("B", in, {m, ir::Expr(16)});
  ir::Tensor c = ir::Compute(
      {m, ir::Expr(16)},
      [&](const std::vector<ir::Expr>& i) { return f(a(i[0], i[1]), b(i[0], i[1])); }, "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  auto i = s.LeafAxis(0);
  auto j = s.LeafAxis(1);
  if (!i.ok()) return i.status();
  if (!j.ok()) return j.status();
  if (target.is_nvgpu()) {
    absl::Status st = s.Bind(*i, "blockIdx.x");
    if (st.ok()) st = s.Bind(*j, "threadIdx.x");
    if (!st.ok()) return st;
  } else if (vector_lanes > 1) {
    auto v = s.Vectorize(*j, vector_lanes);
    if (!v.ok()) return v.status();
  }
  return ir::Lower(name, {a, b, c}, sch, target);
}

/// name(A, C): C[i, j] = f(A[i, j]) over {m, 16}, scheduled as BuildBinary.
inline absl::StatusOr<ir::LoweredFunc> BuildUnary(const std::string& name, ir::Type in,
                                                  const std::function<ir::Expr(ir::Expr)>& f,
                                                  const ir::Target& target, int vector_lanes = 0) {
  ir::Var m("m");
  ir::Tensor a = ir::Placeholder("A", in, {m, ir::Expr(16)});
  ir::Tensor c = ir::Compute(
      {m, ir::Expr(16)}, [&](const std::vector<ir::Expr>& i) { return f(a(i[0], i[1])); }, "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  auto i = s.LeafAxis(0);
  auto j = s.LeafAxis(1);
  if (!i.ok()) return i.status();
  if (!j.ok()) return j.status();
  if (target.is_nvgpu()) {
    absl::Status st = s.Bind(*i, "blockIdx.x");
    if (st.ok()) st = s.Bind(*j, "threadIdx.x");
    if (!st.ok()) return st;
  } else if (vector_lanes > 1) {
    auto v = s.Vectorize(*j, vector_lanes);
    if (!v.ok()) return v.status();
  }
  return ir::Lower(name, {a, c}, sch, target);
}

/// name(A, C): C[i, j] = `value` as a constant of type `t` over {m, 16} (A of type `t`,
/// unread), scheduled as BuildBinary: the literal the code generator prints is what C holds.
inline absl::StatusOr<ir::LoweredFunc> BuildConstant(const std::string& name, ir::Type t,
                                                     double value, const ir::Target& target) {
  return BuildUnary(
      name, t, [&](ir::Expr) { return ir::FloatImm::Make(t, value); }, target);
}

}  // namespace cinn_like::testing
