/// \file The table of single-op cases the op tests run on every target (tests/hlir on x86,
/// tests/gpu on the GPU): each registered op with a compute, over every dtype it accepts and
/// several shapes (broadcasting, size-1, odd sizes, symbolic dims), with fresh random inputs
/// in a domain the op is defined on; and the comparison with the reference interpreter, with
/// per-dtype tolerances stated in one place (Tolerance).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "frontend/net_builder.h"
#include "frontend/program.h"
#include "hlir/graph_compiler.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"
#include "tests/typed_kernels.h"

namespace cinn_like::testing {

using hlir::AttributeMap;
using hlir::Dim;
using hlir::DType;
using hlir::Shape;

/// Where an input's random values come from.
enum class Domain : uint8_t {
  kUniform,   // floats in [-2, 2]; integers in [-5, 5] (unsigned [0, 10]); bool 0/1
  kPositive,  // floats in [0.1, 3]; integers in [1, 5]
  kHalves,    // multiples of 0.5 in [-4, 4] (round's ties)
  kSmallInt,  // whole numbers in [-2, 2] of any dtype (equal values are common)
  kWithNaN,   // kUniform with about one NaN in eight (floats)
  kWide,      // floats in [-300, 300] (casts that wrap)
  kIndex,     // whole numbers in [0, 2]: valid indices of any axis of size >= 3
  kNearOne,   // floats in [0.5, 1.5]; integers -1 or 1 (unsigned 1 or 2): products stay finite
  kUnit,      // floats in (-1, 1) (asin, atanh, erfinv); integers in [-1, 1]
  kSpecial,   // kUniform with about one in four of +-inf, NaN, +-0 (isinf, signbit, fmax)
  kIntEdges,  // kUniform after the signed type's min, max, -1 and 0 as the first four elements
  kHuge,      // floats of magnitude up to 1e20 (past int64); integers as kUniform
  kLarge,     // floats of magnitude 300 to 3e6, log-uniform, either sign (far asymptotic series)
};

struct OpCase {
  std::string op;
  std::vector<DType> dtypes;  // per input
  std::vector<Shape> shapes;  // per input; symbols are bound by `symbols`
  AttributeMap attrs;
  std::vector<Domain> domains;  // per input; missing entries are kUniform
  std::string Describe() const {
    std::string s = op + "(";
    for (size_t i = 0; i < shapes.size(); ++i) {
      s += (i ? ", " : "") + std::string(hlir::DTypeName(dtypes[i])) +
           hlir::ShapeToString(shapes[i]);
    }
    s += ")";
    for (const auto& [k, v] : attrs) s += " " + k + "=" + hlir::AttributeToString(v);
    return s;
  }
};

/// The sizes symbols take at run time.
inline int64_t SymbolValue(const std::string& symbol) { return symbol == "n" ? 7 : 5; }

inline std::vector<int64_t> Concrete(const Shape& s) {
  std::vector<int64_t> out;
  for (const Dim& d : s) out.push_back(d.is_symbolic() ? SymbolValue(d.symbol) : d.value);
  return out;
}

/// The tolerances of every comparison: |got - want| <= atol + rtol * scale, where scale is
/// |want|, or for sum-like ops (SumLike) the reference on |inputs| (cancellation), or for
/// oscillating ops (Oscillating) and 16-bit kernels that round their operands (RoundsOperands) the
/// largest |want| of the tensor. Integer and
/// bool results are exact. float16 and bfloat16 allow about two units in the last place.
struct Tolerance {
  double rtol, atol;
};
inline Tolerance ToleranceFor(DType t) {
  switch (t) {
    case DType::kFloat64:
      return {1e-10, 1e-12};
    case DType::kFloat32:
      return {3e-5, 1e-6};
    case DType::kFloat16:
      return {2.5e-3, 1e-3};
    case DType::kBFloat16:
      return {1.6e-2, 1e-2};
    default:
      return {0, 0};
  }
}
/// Ops whose results oscillate through zero (the Airy and Bessel tails): near a zero the
/// result is tiny but its error is that of the oscillation's amplitude (a phase error), so
/// they are compared against the largest |want| of the tensor as well.
inline bool Oscillating(const std::string& op) {
  return op == "airy_ai" || op == "bessel_j0" || op == "bessel_j1" || op == "bessel_y0" ||
         op == "bessel_y1" || op == "spherical_bessel_j0";
}
/// Orthogonal polynomials the generated code evaluates by a Gauss quadrature (a sum of terms
/// that cancel, hlir/ops/special_polynomials.cc): at high degrees in float64 their relative error
/// reaches about 1e-10 (hermite_polynomial_h of degree near 300: 1.25e-10, seed
/// 1418358650966825548), so float64 gets ten times the usual rtol.
inline bool ByQuadrature(const std::string& op) {
  return op == "hermite_polynomial_h" || op == "hermite_polynomial_he" ||
         op == "laguerre_polynomial_l";
}
/// Ops whose 16-bit kernels round intermediate values to the 16-bit type before the products
/// that sum them: the tensor-core attention backward rounds P and dS (as FlashAttention-2 and
/// cuDNN do), so an output's error follows Σ|dS||q|, the size of the terms, not the sum's
/// (which cancels, and which the reference on |inputs| does not bound: dS = P (dP - Di) has
/// both signs there too). Compared against the largest |want| of the tensor, as Oscillating.
inline bool RoundsOperands(const std::string& op, DType t) {
  return op == "attention_grad" && (t == DType::kFloat16 || t == DType::kBFloat16);
}
inline bool SumLike(const std::string& op) {
  return op == "reduce_sum" || op == "reduce_mean" || op == "matmul" || op == "linear" ||
         op == "index_add" || op == "attention" || op == "attention_grad" || op == "cumsum" ||
         op == "conv2d" || op == "conv2d_backward_data" || op == "conv2d_backward_filter";
}

inline std::vector<DType> Floats() {
  return {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
}
inline std::vector<DType> Numerics() {
  std::vector<DType> v = Floats();
  for (DType t : {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8}) v.push_back(t);
  return v;
}
inline std::vector<DType> AllDTypes() {
  std::vector<DType> v = Numerics();
  v.push_back(DType::kBool);
  return v;
}

inline Shape S(std::initializer_list<int64_t> dims) { return hlir::MakeShape(dims); }
inline Dim Sym(const std::string& s) { return Dim::Symbol(s); }

/// Every case of the table.
inline std::vector<OpCase> AllOpCases() {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) {
    if (c.domains.size() < c.shapes.size()) c.domains.resize(c.shapes.size(), Domain::kUniform);
    cases.push_back(std::move(c));
  };
  const Shape sym_shape{Sym("n"), Dim::Known(3)};
  // Unary ops: dtype class, domain.
  struct Unary {
    const char* op;
    std::vector<DType> dtypes;
    Domain domain;
    AttributeMap attrs;
  };
  std::vector<Unary> unary = {
      {"neg", Numerics(), Domain::kUniform, {}},
      {"abs", Numerics(), Domain::kUniform, {}},
      {"exp", Floats(), Domain::kUniform, {}},
      {"log", Floats(), Domain::kPositive, {}},
      {"log1p", Floats(), Domain::kPositive, {}},
      {"sqrt", Floats(), Domain::kPositive, {}},
      {"rsqrt", Floats(), Domain::kPositive, {}},
      {"reciprocal", Floats(), Domain::kPositive, {}},
      {"sin", Floats(), Domain::kUniform, {}},
      {"cos", Floats(), Domain::kUniform, {}},
      {"tanh", Floats(), Domain::kUniform, {}},
      {"sigmoid", Floats(), Domain::kUniform, {}},
      {"relu", Numerics(), Domain::kWithNaN, {}},
      {"relu6", Numerics(), Domain::kWide, {}},
      {"leaky_relu", Floats(), Domain::kUniform, {{"negative_slope", 0.2}}},
      {"gelu", Floats(), Domain::kUniform, {}},
      {"gelu", Floats(), Domain::kUniform, {{"approximate", std::string("tanh")}}},
      {"silu", Floats(), Domain::kUniform, {}},
      {"softplus", Floats(), Domain::kUniform, {}},
      {"softplus", Floats(), Domain::kUniform, {{"beta", 2.0}, {"threshold", 1.0}}},
      // Attributes past float32, applied in float64 (as infinities, 0 * inf would be NaN)
      {"softplus", Floats(), Domain::kSpecial, {{"beta", 1e300}, {"threshold", 1e300}}},
      {"leaky_relu", Floats(), Domain::kSpecial, {{"negative_slope", 1e300}}},
      {"elu", Floats(), Domain::kSpecial, {{"alpha", 1e300}}},
      {"softplus", Floats(), Domain::kSpecial, {{"beta", 1e-100}, {"threshold", 1e-108}}},
      {"softplus", Floats(), Domain::kWide, {{"beta", 2.0}, {"threshold", INFINITY}}},
      {"floor", Numerics(), Domain::kUniform, {}},
      {"ceil", Numerics(), Domain::kUniform, {}},
      {"round", Numerics(), Domain::kHalves, {}},
      {"sign", Numerics(), Domain::kWithNaN, {}},
      {"logical_not", AllDTypes(), Domain::kSmallInt, {}},
      {"isnan", AllDTypes(), Domain::kWithNaN, {}},
      {"clip", Numerics(), Domain::kWithNaN, {{"min", -0.5}, {"max", 1.25}}},
      {"clip", Numerics(), Domain::kUniform, {{"max", 2.0}}},
      {"clip", Floats(), Domain::kSpecial, {{"min", 1e308}, {"max", -INFINITY}}},
      {"clip", Floats(), Domain::kSpecial, {{"min", INFINITY}}},
  };
  for (const Unary& u : unary) {
    for (DType t : u.dtypes) {
      add({u.op, {t}, {S({5, 7})}, u.attrs, {u.domain}});
      if (t == DType::kFloat32) {
        add({u.op, {t}, {S({1})}, u.attrs, {u.domain}});
        add({u.op, {t}, {S({2, 3, 19})}, u.attrs, {u.domain}});
        add({u.op, {t}, {sym_shape}, u.attrs, {u.domain}});
      }
    }
  }
  for (DType from : AllDTypes()) {
    for (DType to : AllDTypes()) {
      add({"cast",
           {from},
           {S({4, 9})},
           {{"dtype", std::string(hlir::DTypeName(to))}},
           {Domain::kWide}});
    }
  }
  // Floats past int64 wrap modulo 2^64 (a plain conversion is undefined).
  for (DType from : {DType::kFloat64, DType::kFloat32, DType::kBFloat16}) {
    for (DType to : {DType::kInt64, DType::kInt32, DType::kInt8, DType::kUInt8}) {
      add({"cast",
           {from},
           {S({4, 9})},
           {{"dtype", std::string(hlir::DTypeName(to))}},
           {Domain::kHuge}});
    }
  }
  // Binary ops.
  struct Binary {
    const char* op;
    std::vector<DType> dtypes;
    Domain a, b;
    AttributeMap attrs;
  };
  std::vector<Binary> binary = {
      {"add", Numerics(), Domain::kUniform, Domain::kUniform, {}},
      {"sub", Numerics(), Domain::kUniform, Domain::kUniform, {}},
      {"mul", Numerics(), Domain::kUniform, Domain::kUniform, {}},
      {"div", Floats(), Domain::kUniform, Domain::kPositive, {}},
      {"div",
       Numerics(),
       Domain::kUniform,
       Domain::kUniform,
       {{"rounding_mode", std::string("trunc")}}},
      {"div",
       Numerics(),
       Domain::kUniform,
       Domain::kUniform,
       {{"rounding_mode", std::string("floor")}}},
      {"pow", Floats(), Domain::kPositive, Domain::kUniform, {}},
      {"pow",
       {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8},
       Domain::kSmallInt,
       Domain::kSmallInt,
       {}},
      {"maximum", Numerics(), Domain::kWithNaN, Domain::kWithNaN, {}},
      {"minimum", Numerics(), Domain::kWithNaN, Domain::kWithNaN, {}},
      {"mod", Numerics(), Domain::kUniform, Domain::kUniform, {}},
      {"equal", AllDTypes(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"not_equal", AllDTypes(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"less", Numerics(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"less_equal", Numerics(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"greater", Numerics(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"greater_equal", Numerics(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"logical_and", AllDTypes(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"logical_or", AllDTypes(), Domain::kSmallInt, Domain::kSmallInt, {}},
      {"logical_xor", AllDTypes(), Domain::kSmallInt, Domain::kSmallInt, {}},
  };
  for (const Binary& b : binary) {
    for (DType t : b.dtypes) {
      add({b.op, {t, t}, {S({3, 1, 5}), S({4, 5})}, b.attrs, {b.a, b.b}});
      if (t == DType::kFloat32 || t == DType::kInt32) {
        add({b.op, {t, t}, {S({6, 17}), S({6, 17})}, b.attrs, {b.a, b.b}});
        add({b.op, {t, t}, {S({1}), S({2, 3, 1})}, b.attrs, {b.a, b.b}});
        add({b.op, {t, t}, {sym_shape, S({1, 3})}, b.attrs, {b.a, b.b}});
      }
    }
  }
  // Integer division at its edges: broadcast [16, 1] by [1, 16], every pair of min, max, -1
  // and 0 meets (INT_MIN / -1 wraps, a zero divisor gives 0: neither may trap). int64 is left
  // out: the reference divides in double, exact only below 2^53.
  for (DType t : {DType::kInt8, DType::kInt16, DType::kInt32}) {
    for (const char* mode : {"trunc", "floor"}) {
      add({"div",
           {t, t},
           {S({16, 1}), S({1, 16})},
           {{"rounding_mode", std::string(mode)}},
           {Domain::kIntEdges, Domain::kIntEdges}});
    }
    for (const char* op : {"mod", "fmod"}) {
      add({op, {t, t}, {S({16, 1}), S({1, 16})}, {}, {Domain::kIntEdges, Domain::kIntEdges}});
    }
  }
  add({"logical_and",
       {DType::kBool, DType::kFloat32},
       {S({4, 5}), S({5})},
       {},
       {Domain::kSmallInt, Domain::kSmallInt}});
  for (DType t : AllDTypes()) {
    add({"where", {DType::kBool, t, t}, {S({4, 1}), S({4, 6}), S({6})}, {}, {}});
  }
  // Reductions.
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"}) {
    bool mean = std::string(op) == "reduce_mean";
    bool maxmin = std::string(op) == "reduce_max" || std::string(op) == "reduce_min";
    bool prod = std::string(op) == "reduce_prod";
    Domain d = maxmin ? Domain::kWithNaN : prod ? Domain::kNearOne : Domain::kUniform;
    for (DType t : mean ? Floats() : Numerics()) {
      add({op, {t}, {S({4, 7})}, {{"axes", std::vector<int64_t>{1}}}, {d}});
      if (t == DType::kFloat32 || t == DType::kInt32) {
        add({op, {t}, {S({5, 3})}, {{"axes", std::vector<int64_t>{0}}}, {d}});
        add({op,
             {t},
             {S({3, 4, 5})},
             {{"axes", std::vector<int64_t>{0, 2}}, {"keepdim", true}},
             {d}});
        add({op, {t}, {S({2, 300})}, {{"axes", std::vector<int64_t>{-1}}}, {d}});
        add({op, {t}, {Shape{Sym("n"), Dim::Known(9)}}, {{"axes", std::vector<int64_t>{1}}}, {d}});
        add({op, {t}, {S({3, 11})}, {{"keepdim", true}}, {d}});  // every axis
      }
      // An empty reduced axis: the identity (0, 1, NaN for the mean); max and min of no
      // elements are refused (tests/hlir/reference_ops_test.cc), as PyTorch raises.
      if (!maxmin && (t == DType::kFloat32 || t == DType::kInt64 || t == DType::kInt8)) {
        add({op, {t}, {S({4, 0})}, {{"axes", std::vector<int64_t>{1}}}, {d}});
      }
    }
  }
  for (const char* op : {"argmax", "argmin"}) {
    for (DType t : Numerics()) {
      add({op, {t}, {S({5, 9})}, {{"axis", int64_t{1}}}, {Domain::kSmallInt}});  // ties
      if (t == DType::kFloat32) {
        add({op, {t}, {S({5, 9})}, {{"axis", int64_t{-1}}}, {Domain::kWithNaN}});
        add({op, {t}, {S({6, 4, 3})}, {{"axis", int64_t{1}}, {"keepdim", true}}, {}});
        add({op, {t}, {S({300, 2})}, {{"axis", int64_t{0}}}, {}});
      }
    }
  }
  for (const char* op : {"softmax", "log_softmax"}) {
    for (DType t : Floats()) {
      add({op, {t}, {S({4, 33})}, {}, {Domain::kWide}});
      if (t == DType::kFloat32) add({op, {t}, {S({3, 5, 7})}, {{"axis", int64_t{1}}}, {}});
      // A 1-D input: the max and sum are scalars, the whole tensor is one row (GPU: one block,
      // or per-thread reductions for short rows).
      add({op, {t}, {S({5})}, {}, {}});
      if (t == DType::kFloat32) add({op, {t}, {S({1000})}, {}, {}});
    }
  }
  for (DType t : Floats()) {
    add({"layer_norm", {t, t, t}, {S({4, 16}), S({16}), S({16})}, {}, {}});
    add({"rms_norm", {t, t}, {S({4, 16}), S({16})}, {}, {}});
    add({"batch_norm",
         {t, t, t, t, t},
         {S({2, 3, 4, 5}), S({3}), S({3}), S({3}), S({3})},
         {},
         {Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kUniform,
          Domain::kPositive}});
    if (t == DType::kFloat32) {
      add({"layer_norm", {t}, {S({2, 3, 8})}, {{"axis", int64_t{1}}, {"epsilon", 1e-3}}, {}});
      add({"rms_norm", {t}, {S({3, 33})}, {}, {}});
      add({"batch_norm",
           {t, t, t, t, t},
           {S({6, 4}), S({4}), S({4}), S({4}), S({4})},
           {{"axis", int64_t{-1}}},
           {Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kUniform,
            Domain::kPositive}});
    }
  }
  // matmul and linear.
  for (DType t : Numerics()) {
    add({"matmul", {t, t}, {S({3, 4}), S({4, 5})}, {}, {Domain::kSmallInt, Domain::kSmallInt}});
    if (t == DType::kFloat32) {
      add({"matmul",
           {t, t},
           {S({4, 3}), S({5, 4})},
           {{"transpose_x", true}, {"transpose_y", true}},
           {}});
      add({"matmul", {t, t}, {S({2, 1, 3, 4}), S({3, 4, 6})}, {}, {}});
      add({"matmul", {t, t}, {Shape{Sym("n"), Dim::Known(8)}, S({8, 3})}, {}, {}});
    }
  }
  for (DType t : Floats()) {
    add({"linear", {t, t, t}, {S({3, 8}), S({5, 8}), S({5})}, {}, {}});
    add({"linear", {t, t}, {S({2, 3, 8}), S({5, 8})}, {}, {}});
  }
  // Shape ops.
  for (DType t : AllDTypes()) {
    add({"reshape", {t}, {S({2, 3, 4})}, {{"shape", std::vector<int64_t>{4, -1}}}, {}});
  }
  // Reshapes whose dims group (a dim kept as it is reads its own index): leading dims merged
  // before a kept one, split again, dims of size 1 on either side, and no kept dim at all.
  for (const auto& [from, to] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{{{4, 6, 5}, {24, 5}},
                                                                          {{24, 5}, {2, 12, 5}},
                                                                          {{2, 1, 3, 4}, {6, 1, 4}},
                                                                          {{1, 12}, {3, 4, 1}},
                                                                          {{6, 4}, {3, 8}},
                                                                          {{5, 2, 3}, {5, 3, 2}}}) {
    add({"reshape", {DType::kFloat32}, {hlir::MakeShape(from)}, {{"shape", to}}, {}});
  }
  for (DType t : AllDTypes()) {
    add({"transpose", {t}, {S({2, 3, 4})}, {{"perm", std::vector<int64_t>{2, 0, 1}}}, {}});
    add({"broadcast_to", {t}, {S({3, 1})}, {{"shape", std::vector<int64_t>{2, 3, 4}}}, {}});
    add({"expand_dims", {t}, {S({3, 4})}, {{"axes", std::vector<int64_t>{0, -1}}}, {}});
    add({"squeeze", {t}, {S({3, 1, 4, 1})}, {}, {}});
    add({"concat", {t, t, t}, {S({2, 3}), S({2, 5}), S({2, 1})}, {{"axis", int64_t{1}}}, {}});
    add({"slice",
         {t},
         {S({7, 9})},
         {{"axes", std::vector<int64_t>{0, 1}},
          {"starts", std::vector<int64_t>{1, -8}},
          {"ends", std::vector<int64_t>{6, 100}},
          {"steps", std::vector<int64_t>{2, 3}}},
         {}});
    add({"fill",
         {},
         {},
         {{"shape", std::vector<int64_t>{3, 5}},
          {"value", 2.75},
          {"dtype", std::string(hlir::DTypeName(t))}},
         {}});
  }
  add({"squeeze", {DType::kFloat32}, {S({3, 1, 4, 1})}, {{"axes", std::vector<int64_t>{1}}}, {}});
  add({"concat",
       {DType::kFloat32, DType::kFloat32},
       {S({1, 4}), S({3, 4})},
       {{"axis", int64_t{0}}},
       {}});
  add({"transpose",
       {DType::kFloat32},
       {Shape{Sym("n"), Dim::Known(3)}},
       {{"perm", std::vector<int64_t>{1, 0}}},
       {}});
  add({"broadcast_to", {DType::kFloat16}, {S({5})}, {{"shape", std::vector<int64_t>{4, 5}}}, {}});
  for (DType t :
       {DType::kInt64, DType::kInt32, DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    add({"arange",
         {},
         {},
         {{"start", 1.5}, {"end", 9.0}, {"step", 0.7}, {"dtype", std::string(hlir::DTypeName(t))}},
         {}});
  }
  add({"arange", {}, {}, {{"end", 10.0}, {"step", 3.0}}, {}});

  // Convolution and pooling (NCHW), index ops.
  using I64s = std::vector<int64_t>;
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    add({"conv2d",
         {t, t},
         {S({2, 3, 9, 8}), S({4, 3, 3, 3})},
         {{"paddings", I64s{1, 1}}, {"strides", I64s{2, 1}}},
         {}});
    add({"conv2d",
         {t, t, t},
         {S({1, 4, 7, 7}), S({4, 2, 3, 3}), S({4})},
         {{"groups", int64_t{2}}, {"dilations", I64s{2, 2}}},
         {}});
  }
  // Channels last (the conv layout pass's form): x [N, H, W, C], weight [O, KH, KW, C/groups].
  for (DType t : Floats()) {
    add({"conv2d",
         {t, t},
         {S({2, 9, 8, 3}), S({4, 3, 3, 3})},
         {{"paddings", I64s{1, 1}}, {"strides", I64s{2, 1}}, {"data_format", std::string("NHWC")}},
         {}});
    add({"conv2d",
         {t, t, t},
         {S({1, 7, 7, 4}), S({6, 3, 3, 2}), S({6})},
         {{"groups", int64_t{2}}, {"dilations", I64s{2, 2}}, {"data_format", std::string("NHWC")}},
         {}});
  }
  for (DType t : Floats()) {  // 16-bit windows too: their max is a 16-bit block reduce on GPUs
    add({"max_pool2d",
         {t},
         {S({2, 3, 9, 7})},
         {{"kernel_size", I64s{3, 3}}, {"strides", I64s{2, 2}}, {"paddings", I64s{1, 1}}},
         {}});
    add({"avg_pool2d",
         {t},
         {S({1, 2, 8, 9})},
         {{"kernel_size", I64s{2, 3}}, {"paddings", I64s{1, 1}}},
         {}});
  }
  add({"conv2d",
       {DType::kFloat32, DType::kFloat32},
       {Shape{Sym("n"), Dim::Known(2), Dim::Known(5), Dim::Known(5)}, S({3, 2, 3, 3})},
       {{"paddings", I64s{1, 1}}},
       {}});
  add({"avg_pool2d",
       {DType::kFloat32},
       {S({1, 2, 8, 9})},
       {{"kernel_size", I64s{3, 3}},
        {"strides", I64s{2, 2}},
        {"paddings", I64s{1, 1}},
        {"count_include_pad", false}},
       {}});
  for (DType index : {DType::kInt32, DType::kInt64}) {
    add({"gather",
         {DType::kFloat32, index},
         {S({4, 5}), S({7})},
         {{"axis", int64_t{0}}},
         {Domain::kUniform, Domain::kIndex}});
    add({"one_hot", {index}, {S({3, 4})}, {{"depth", int64_t{5}}}, {Domain::kIndex}});
    add({"check_index",
         {index},
         {S({3, 4})},
         {{"low", int64_t{-3}}, {"high", int64_t{3}}, {"what", std::string("x[i]")}},
         {Domain::kIndex}});
  }
  add({"check_index",
       {DType::kInt64},
       {Shape{Sym("n")}},
       {{"low", int64_t{0}}, {"high", int64_t{3}}},
       {Domain::kIndex}});
  add({"gather",
       {DType::kFloat16, DType::kInt64},
       {S({3, 6}), S({4})},
       {{"axis", int64_t{1}}},
       {Domain::kUniform, Domain::kIndex}});
  add({"one_hot",
       {DType::kInt64},
       {S({6})},
       {{"depth", int64_t{3}}, {"dtype", std::string("int32")}},
       {Domain::kIndex}});
  for (DType t : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
    add({"pad", {t}, {S({3, 4})}, {{"paddings", I64s{1, 0, 2, 3}}, {"value", 1.5}}, {}});
  }
  add({"split",
       {DType::kFloat32},
       {S({3, 10})},
       {{"axis", int64_t{1}}, {"sections", I64s{3, -1, 2}}},
       {}});
  add({"split",
       {DType::kInt64},
       {S({6, 2})},
       {{"axis", int64_t{0}}, {"sections", I64s{2, 4}}},
       {}});
  // The constant op (a graph output here; its compute is a select chain). Keep new cases after
  // the others: generated-code dumps name each case by its position.
  add({"constant",
       {},
       {},
       {{"values", std::vector<double>{1.5, -2, 0.25, 3, 7, -0.5}},
        {"shape", I64s{2, 3}},
        {"dtype", std::string("float32")}},
       {}});
  // Ops added after the table above (their cases come last so the dumps' names hold).
  for (DType t : Floats()) add({"erf", {t}, {S({5, 7})}, {}, {Domain::kUniform}});
  add({"erf", {DType::kFloat32}, {sym_shape}, {}, {Domain::kUniform}});
  for (DType t : Numerics()) {
    add({"index_add",
         {t, DType::kInt64, t},
         {S({4, 5}), S({7}), S({7, 5})},
         {{"axis", int64_t{0}}},
         {Domain::kUniform, Domain::kIndex, Domain::kUniform}});
  }
  add({"index_add",
       {DType::kFloat32, DType::kInt32, DType::kFloat32},
       {S({2, 3, 6}), S({9}), S({2, 9, 6})},
       {{"axis", int64_t{-2}}},
       {Domain::kUniform, Domain::kIndex, Domain::kUniform}});
  add({"index_add",
       {DType::kFloat32, DType::kInt64, DType::kFloat32},
       {sym_shape, S({4}), Shape{Sym("n"), Dim::Known(4)}},
       {{"axis", int64_t{1}}},
       {Domain::kUniform, Domain::kIndex, Domain::kUniform}});
  // Attention: q [B, H, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv], [mask]; grouped heads,
  // bool and additive masks, causal (also with Lq > Lk), several key and query tiles of the
  // fused GPU kernel (Lk 100, Lq 70), head dims in each of its buckets, a symbolic length.
  for (DType t : Floats()) {
    add({"attention",
         {t, t, t, DType::kBool},
         {S({1, 2, 7, 16}), S({1, 2, 9, 16}), S({1, 2, 9, 12}), S({7, 9})},
         {},
         {}});
  }
  add({"attention",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32},
       {S({2, 4, 5, 8}), S({2, 2, 6, 8}), S({2, 2, 6, 8})},
       {},
       {}});
  add({"attention",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32},
       {S({2, 2, 5, 8}), S({2, 2, 6, 8}), S({2, 2, 6, 8}), S({2, 1, 5, 6})},
       {{"causal", true}, {"scale", 0.3}},
       {}});
  add({"attention",
       {DType::kFloat16, DType::kFloat16, DType::kFloat16},
       {S({1, 4, 70, 64}), S({1, 1, 100, 64}), S({1, 1, 100, 64})},
       {{"causal", true}},
       {}});
  add({"attention",
       {DType::kBFloat16, DType::kBFloat16, DType::kBFloat16, DType::kBFloat16},
       {S({2, 2, 9, 128}), S({2, 2, 40, 128}), S({2, 2, 40, 96}), S({2, 2, 9, 40})},
       {},
       {}});
  add({"attention",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32},
       {S({1, 2, 9, 200}), S({1, 2, 4, 200}), S({1, 2, 4, 200})},
       {{"causal", true}},
       {}});
  add({"attention",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat16},
       {Shape{Dim::Known(1), Dim::Known(2), Sym("n"), Dim::Known(32)}, S({1, 2, 33, 32}),
        S({1, 2, 33, 32}), S({33})},
       {{"scale", 0.25}},
       {}});
  // Attention with dropout (issue 49): the seed and the stream of the dropout mask as the last
  // inputs; no mask and causal, a float mask with grouped heads over several tiles of the fused
  // GPU kernel (its tensor-core form), a bool mask in bfloat16.
  add({"attention",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kInt64, DType::kInt64},
       {S({2, 2, 9, 16}), S({2, 2, 11, 16}), S({2, 2, 11, 16}), S({1}), S({1})},
       {{"causal", true}, {"dropout", 0.25}},
       {Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kIntEdges, Domain::kIndex}});
  add({"attention",
       {DType::kFloat16, DType::kFloat16, DType::kFloat16, DType::kFloat16, DType::kInt64,
        DType::kInt64},
       {S({1, 4, 70, 64}), S({1, 2, 100, 64}), S({1, 2, 100, 64}), S({70, 100}), S({1}), S({1})},
       {{"dropout", 0.5}},
       {Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kUniform,
        Domain::kIndex}});
  add({"attention",
       {DType::kBFloat16, DType::kBFloat16, DType::kBFloat16, DType::kBool, DType::kInt64,
        DType::kInt64},
       {S({1, 2, 9, 32}), S({1, 2, 40, 32}), S({1, 2, 40, 32}), S({9, 40}), S({1}), S({1})},
       {{"dropout", 0.1}},
       {Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kUniform,
        Domain::kIndex}});
  // attention_grad (q, k, v, out, grad_out, logsumexp, [mask], [seed, stream]): the
  // logsumexp positive, so that the probabilities exp(s - logsumexp) stay near 1 as a real
  // backward's do; every dtype with a bool mask, grouped heads, a float mask with causal,
  // dropout over several tiles of the fused GPU kernel (grouped, a float16 mask), head dim 128,
  // a symbolic query length.
  const Domain u = Domain::kUniform, lse = Domain::kPositive;
  for (DType t : Floats()) {
    add({"attention_grad",
         {t, t, t, t, t, DType::kFloat32, DType::kBool},
         {S({1, 2, 7, 16}), S({1, 2, 9, 16}), S({1, 2, 9, 12}), S({1, 2, 7, 12}), S({1, 2, 7, 12}),
          S({1, 2, 7}), S({7, 9})},
         {{"scale", 0.25}},
         {u, u, u, u, u, lse, u}});
  }
  add({"attention_grad",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32,
        DType::kFloat32, DType::kFloat32},
       {S({2, 4, 5, 8}), S({2, 2, 6, 8}), S({2, 2, 6, 8}), S({2, 4, 5, 8}), S({2, 4, 5, 8}),
        S({2, 4, 5}), S({2, 1, 5, 6})},
       {{"causal", true}, {"scale", 0.3}},
       {u, u, u, u, u, lse, u}});
  add({"attention_grad",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32,
        DType::kFloat32, DType::kInt64, DType::kInt64},
       {S({2, 2, 9, 16}), S({2, 2, 11, 16}), S({2, 2, 11, 16}), S({2, 2, 9, 16}), S({2, 2, 9, 16}),
        S({2, 2, 9}), S({1}), S({1})},
       {{"causal", true}, {"dropout", 0.25}, {"scale", 0.25}},
       {u, u, u, u, u, lse, Domain::kIntEdges, Domain::kIndex}});
  add({"attention_grad",
       {DType::kFloat16, DType::kFloat16, DType::kFloat16, DType::kFloat16, DType::kFloat16,
        DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt64},
       {S({1, 4, 70, 64}), S({1, 2, 100, 64}), S({1, 2, 100, 64}), S({1, 4, 70, 64}),
        S({1, 4, 70, 64}), S({1, 4, 70}), S({70, 100}), S({1}), S({1})},
       {{"dropout", 0.5}, {"scale", 0.05}},
       {u, u, u, u, u, lse, u, u, Domain::kIndex}});
  add({"attention_grad",
       {DType::kBFloat16, DType::kBFloat16, DType::kBFloat16, DType::kBFloat16, DType::kBFloat16,
        DType::kFloat32},
       {S({1, 2, 40, 128}), S({1, 2, 33, 128}), S({1, 2, 33, 96}), S({1, 2, 40, 96}),
        S({1, 2, 40, 96}), S({1, 2, 40})},
       {{"causal", true}, {"scale", 0.05}},
       {u, u, u, u, u, lse}});
  const Shape rows{Dim::Known(1), Dim::Known(2), Sym("n"), Dim::Known(32)};
  add({"attention_grad",
       {DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32,
        DType::kFloat32, DType::kFloat16},
       {rows, S({1, 2, 33, 32}), S({1, 2, 33, 32}), rows, rows,
        Shape{Dim::Known(1), Dim::Known(2), Sym("n")}, S({33})},
       {{"scale", 0.125}},
       {u, u, u, u, u, lse, u}});
  // Scans along one axis: every dtype on a short line, then (float32) the first, a middle and
  // a negative axis, size-1 dims, a line long enough for the CPU's thread pool, a symbolic
  // scanned axis; cummax/cummin on small integers (ties: the last index) and with NaNs,
  // logcumsumexp with infinities and NaNs.
  struct Scan {
    const char* op;
    std::vector<DType> dtypes;
    Domain domain;
  };
  const std::vector<Scan> scans = {{"cumsum", Numerics(), Domain::kUniform},
                                   {"cumprod", Numerics(), Domain::kNearOne},
                                   {"cummax", AllDTypes(), Domain::kSmallInt},
                                   {"cummin", AllDTypes(), Domain::kSmallInt},
                                   {"logcumsumexp", Floats(), Domain::kUniform}};
  for (const Scan& sc : scans) {
    for (DType t : sc.dtypes) {
      add({sc.op, {t}, {S({5, 9})}, {{"axis", int64_t{1}}}, {sc.domain}});
      if (t != DType::kFloat32) continue;
      add({sc.op, {t}, {S({4, 3, 6})}, {{"axis", int64_t{0}}}, {sc.domain}});
      add({sc.op, {t}, {S({4, 3, 6})}, {{"axis", int64_t{-2}}}, {sc.domain}});
      add({sc.op, {t}, {S({3, 1, 7, 1})}, {{"axis", int64_t{2}}}, {sc.domain}});
      add({sc.op, {t}, {S({33, 200})}, {{"axis", int64_t{-1}}}, {sc.domain}});
      add({sc.op, {t}, {Shape{Sym("n"), Dim::Known(4)}}, {{"axis", int64_t{0}}}, {sc.domain}});
    }
  }
  for (const char* op : {"cummax", "cummin"}) {
    add({op, {DType::kFloat32}, {S({6, 11})}, {{"axis", int64_t{1}}}, {Domain::kWithNaN}});
    add({op, {DType::kFloat16}, {S({6, 11})}, {{"axis", int64_t{0}}}, {Domain::kSpecial}});
  }
  add({"logcumsumexp",
       {DType::kFloat32},
       {S({6, 11})},
       {{"axis", int64_t{1}}},
       {Domain::kSpecial}});
  add({"logcumsumexp", {DType::kFloat64}, {S({4, 9})}, {{"axis", int64_t{0}}}, {Domain::kWide}});
  // Elementwise math added for PyTorch's OpInfo ops (issue 12).
  struct NewUnary {
    const char* op;
    std::vector<DType> dtypes;
    Domain domain;
    AttributeMap attrs;
  };
  const std::vector<NewUnary> new_unary = {
      {"tan", Floats(), Domain::kUniform, {}},
      {"asin", Floats(), Domain::kUnit, {}},
      {"acos", Floats(), Domain::kUnit, {}},
      {"atan", Floats(), Domain::kWide, {}},
      {"sinh", Floats(), Domain::kUniform, {}},
      {"cosh", Floats(), Domain::kUniform, {}},
      {"asinh", Floats(), Domain::kWide, {}},
      {"acosh", Floats(), Domain::kPositive, {}},  // below 1: NaN on both sides
      {"atanh", Floats(), Domain::kUnit, {}},
      {"expm1", Floats(), Domain::kUniform, {}},
      {"exp2", Floats(), Domain::kUniform, {}},
      {"log2", Floats(), Domain::kPositive, {}},
      {"log10", Floats(), Domain::kPositive, {}},
      {"erfc", Floats(), Domain::kUniform, {}},
      {"lgamma", Floats(), Domain::kPositive, {}},
      {"trunc", Numerics(), Domain::kWide, {}},
      {"isinf", AllDTypes(), Domain::kSpecial, {}},
      {"signbit", Numerics(), Domain::kSpecial, {}},
      {"elu", Floats(), Domain::kUniform, {}},
      {"elu", Floats(), Domain::kUniform, {{"alpha", 1.7}, {"scale", 1.05}, {"input_scale", 0.5}}},
      {"digamma", Floats(), Domain::kUniform, {}},
      {"erfinv", Floats(), Domain::kUnit, {}},
      {"erfcx", Floats(), Domain::kUniform, {}},
      {"i0", Floats(), Domain::kUniform, {}},
      {"i0e", Floats(), Domain::kUniform, {}},
  };
  for (const NewUnary& u : new_unary) {
    for (DType t : u.dtypes) {
      add({u.op, {t}, {S({5, 7})}, u.attrs, {u.domain}});
      if (t == DType::kFloat32) add({u.op, {t}, {sym_shape}, u.attrs, {u.domain}});
    }
  }
  // Poles, edges and far branches: lgamma and digamma at the non-positive integers, erfinv
  // past +-1, erfcx's and i0's asymptotic series, digamma's reflection far from 0.
  for (const char* op : {"lgamma", "digamma", "erfinv"}) {
    add({op, {DType::kFloat64}, {S({4, 9})}, {}, {Domain::kHalves}});
  }
  for (const char* op : {"digamma", "erfcx", "i0", "i0e", "erfinv"}) {
    for (DType t : {DType::kFloat64, DType::kFloat32}) {
      add({op, {t}, {S({6, 11})}, {}, {Domain::kWide}});
      add({op, {t}, {S({6, 11})}, {}, {Domain::kSpecial}});
    }
  }
  struct NewBinary {
    const char* op;
    std::vector<DType> dtypes;
    Domain a, b;
  };
  const std::vector<NewBinary> new_binary = {
      {"fmod", Numerics(), Domain::kUniform, Domain::kUniform},
      {"fmod", Floats(), Domain::kSpecial, Domain::kSpecial},
      {"fmax", Numerics(), Domain::kWithNaN, Domain::kWithNaN},
      {"fmin", Numerics(), Domain::kWithNaN, Domain::kWithNaN},
      {"atan2", Floats(), Domain::kSpecial, Domain::kSpecial},
      {"hypot", Floats(), Domain::kWide, Domain::kWide},
      {"copysign", Floats(), Domain::kSpecial, Domain::kSpecial},
  };
  for (const NewBinary& b : new_binary) {
    for (DType t : b.dtypes) {
      add({b.op, {t, t}, {S({3, 1, 5}), S({4, 5})}, {}, {b.a, b.b}});
      if (t == DType::kFloat32 || t == DType::kInt32) {
        add({b.op, {t, t}, {sym_shape, S({1, 3})}, {}, {b.a, b.b}});
      }
    }
  }
  // Special functions of issue 12's second part: every float dtype on its usual domain, then
  // (float64 and float32) wide arguments for the far branches and asymptotic series, and
  // infinities, NaNs and signed zeros.
  const std::vector<NewUnary> special_unary = {
      // (n = 1 at a negative integer is PyTorch's float32 rounding for 32-bit and narrower
      // floats, which the reference on doubles cannot know: no integers there)
      {"polygamma", {DType::kFloat64, DType::kFloat32}, Domain::kUniform, {{"n", int64_t{1}}}},
      {"polygamma", {DType::kFloat16, DType::kBFloat16}, Domain::kPositive, {{"n", int64_t{1}}}},
      // Poles (-2, -1, 0): sin's rounding at float32's pi below float64 (the reference knows)
      {"polygamma", Floats(), Domain::kSmallInt, {{"n", int64_t{1}}}},
      {"polygamma", Floats(), Domain::kUniform, {{"n", int64_t{2}}}},
      {"polygamma", Floats(), Domain::kHalves, {{"n", int64_t{3}}}},
      {"polygamma", Floats(), Domain::kWide, {{"n", int64_t{4}}}},
      {"i1", Floats(), Domain::kUniform, {}},
      {"i1e", Floats(), Domain::kUniform, {}},
      {"bessel_k0", Floats(), Domain::kPositive, {}},
      {"bessel_k1", Floats(), Domain::kPositive, {}},
      {"bessel_k0e", Floats(), Domain::kPositive, {}},
      {"bessel_k1e", Floats(), Domain::kPositive, {}},
      {"bessel_j0", Floats(), Domain::kUniform, {}},
      {"bessel_j1", Floats(), Domain::kUniform, {}},
      {"bessel_y0", Floats(), Domain::kPositive, {}},
      {"bessel_y1", Floats(), Domain::kPositive, {}},
      {"spherical_bessel_j0", Floats(), Domain::kUniform, {}},
      {"ndtri", Floats(), Domain::kUnit, {}},
      {"ndtri", Floats(), Domain::kNearOne, {}},
      {"frexp_mantissa", Floats(), Domain::kUniform, {}},
      {"frexp_exponent", Floats(), Domain::kUniform, {}},
      {"airy_ai", Floats(), Domain::kUniform, {}},
      {"airy_ai", Floats(), Domain::kHalves, {}},
      // The oscillating and decaying tails, [-300, 300] (airy_ai, the old reference, lost digits)
      {"airy_ai", Floats(), Domain::kWide, {}},
  };
  for (const NewUnary& u : special_unary) {
    for (DType t : u.dtypes) add({u.op, {t}, {S({5, 7})}, u.attrs, {u.domain}});
  }
  add({"polygamma", {DType::kFloat32}, {sym_shape}, {{"n", int64_t{1}}}, {Domain::kUniform}});
  for (const char* op :
       {"i1", "i1e", "bessel_k0", "bessel_k1", "bessel_k0e", "bessel_k1e", "bessel_j0", "bessel_j1",
        "bessel_y0", "bessel_y1", "spherical_bessel_j0", "frexp_mantissa", "frexp_exponent"}) {
    for (DType t : {DType::kFloat64, DType::kFloat32}) {
      add({op, {t}, {S({6, 11})}, {}, {Domain::kWide}});
      add({op, {t}, {S({6, 11})}, {}, {Domain::kSpecial}});
    }
  }
  // Past the reach of C++17's Bessel routines (they throw beyond about 1e6) and where the scaled
  // forms are 0 * inf unless computed scaled: magnitudes 300 to 3e6, and up to 1e20.
  for (const char* op : {"i0", "i0e", "i1", "i1e", "bessel_k0", "bessel_k1", "bessel_k0e",
                         "bessel_k1e", "spherical_bessel_j0"}) {
    for (DType t : {DType::kFloat64, DType::kFloat32}) {
      add({op, {t}, {S({6, 11})}, {}, {Domain::kLarge}});
      add({op, {t}, {S({6, 11})}, {}, {Domain::kHuge}});
    }
  }
  for (int64_t n : {1, 2, 5}) {
    add({"polygamma", {DType::kFloat64}, {S({6, 11})}, {{"n", n}}, {Domain::kSpecial}});
  }
  // Magnitudes 300 to 3e6: the reference reflects below -1000, as the compute does below 1/2.
  // (Not n = 1: its compute reflects with sin(pi x) as PyTorch's trigamma does, whose rounding
  // at large |x| is about |x| * 1e-16 relative, 6e-10 at -2e6.)
  add({"polygamma", {DType::kFloat64}, {S({6, 11})}, {{"n", int64_t{2}}}, {Domain::kLarge}});
  // Half-integers, where cot(pi x) is 0 and an even order's P_n has a large slope (n = 6 was off
  // by 2e-9 relative at -3.5 when cot was 6e-17 there; found by fuzz_compile_run).
  add({"polygamma", {DType::kFloat64}, {S({6, 11})}, {{"n", int64_t{6}}}, {Domain::kHalves}});
  add({"ndtri", {DType::kFloat64}, {S({6, 11})}, {}, {Domain::kSpecial}});
  add({"airy_ai", {DType::kFloat64}, {S({6, 11})}, {}, {Domain::kSpecial}});
  const std::vector<NewBinary> special_binary = {
      {"zeta", Floats(), Domain::kNearOne, Domain::kPositive},
      {"zeta", Floats(), Domain::kWide, Domain::kWide},
      {"igamma", Floats(), Domain::kPositive, Domain::kPositive},
      {"igammac", Floats(), Domain::kPositive, Domain::kPositive},
      {"nextafter", Floats(), Domain::kSpecial, Domain::kSpecial},
      {"nextafter", Floats(), Domain::kSmallInt, Domain::kSmallInt},
  };
  for (const NewBinary& b : special_binary) {
    for (DType t : b.dtypes) add({b.op, {t, t}, {S({3, 1, 5}), S({4, 5})}, {}, {b.a, b.b}});
  }
  for (const char* op : {"igamma", "igammac", "zeta"}) {
    for (DType t : {DType::kFloat64, DType::kFloat32}) {
      add({op, {t, t}, {S({6, 11}), S({6, 11})}, {}, {Domain::kWide, Domain::kWide}});
      add({op, {t, t}, {S({6, 11}), S({6, 11})}, {}, {Domain::kSpecial, Domain::kSpecial}});
    }
  }
  add({"nextafter",
       {DType::kFloat32, DType::kFloat32},
       {sym_shape, S({1, 3})},
       {},
       {Domain::kUniform, Domain::kUniform}});
  // Orthogonal polynomials of a tensor degree: degrees -4..4 (kHalves, truncated), then
  // (float64) degrees to 300 (the quadratures' limit of 127 included) on wide or special x.
  for (const char* op : {"chebyshev_polynomial_t", "legendre_polynomial_p", "hermite_polynomial_h",
                         "hermite_polynomial_he", "laguerre_polynomial_l", "chebyshev_polynomial_u",
                         "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                         "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w"}) {
    for (DType t : Floats()) {
      add({op, {t, t}, {S({3, 1, 5}), S({4, 5})}, {}, {Domain::kUniform, Domain::kHalves}});
    }
    add({op,
         {DType::kFloat64, DType::kFloat64},
         {S({6, 11}), S({6, 11})},
         {},
         {Domain::kSpecial, Domain::kHalves}});
    add({op,
         {DType::kFloat32, DType::kFloat32},
         {sym_shape, S({1, 3})},
         {},
         {Domain::kUnit, Domain::kPositive}});
  }
  add({"chebyshev_polynomial_t",
       {DType::kFloat64, DType::kFloat64},
       {S({6, 11}), S({6, 11})},
       {},
       {Domain::kUnit, Domain::kWide}});
  add({"legendre_polynomial_p",
       {DType::kFloat64, DType::kFloat64},
       {S({6, 11}), S({6, 11})},
       {},
       {Domain::kUnit, Domain::kWide}});
  add({"laguerre_polynomial_l",
       {DType::kFloat64, DType::kFloat64},
       {S({6, 11}), S({6, 11})},
       {},
       {Domain::kWide, Domain::kWide}});
  // Degrees to 300 at moderate x, where a quadrature over terms up to 2^n would cancel.
  for (const char* op : {"laguerre_polynomial_l", "hermite_polynomial_h", "hermite_polynomial_he",
                         "legendre_polynomial_p"}) {
    add({op,
         {DType::kFloat64, DType::kFloat64},
         {S({6, 11}), S({6, 11})},
         {},
         {Domain::kUniform, Domain::kWide}});
  }
  // Outside [-1, 1] and to degree 300 the Chebyshev values overflow the output's dtype, and
  // double (|x| near 300 from degree 110), to a signed inf (where PyTorch's recurrence gives
  // inf - inf = NaN; the reference runs it in long double).
  for (const char* op : {"chebyshev_polynomial_t", "chebyshev_polynomial_u",
                         "chebyshev_polynomial_v", "chebyshev_polynomial_w"}) {
    for (DType t : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
      add({op, {t, t}, {S({6, 11}), S({6, 11})}, {}, {Domain::kWide, Domain::kWide}});
    }
  }
  // random_uniform (issue 49): Philox uniforms from a seed input, equal to the reference's.
  for (DType t : Floats()) {
    add({"random_uniform",
         {DType::kInt64},
         {S({1})},
         {{"shape", I64s{5, 7}},
          {"dtype", std::string(hlir::DTypeName(t))},
          {"stream", int64_t{3}}},
         {Domain::kIntEdges}});
  }
  add({"random_uniform",
       {DType::kInt64},
       {S({1})},
       {{"shape", I64s{33, 200}}},
       {Domain::kUniform}});
  // The convolution's gradients (issue 49): strides, paddings, dilations and groups.
  struct ConvGrad {
    Shape a, b;
    I64s strides, paddings, dilations, size;
    int64_t groups;
  };
  const std::vector<ConvGrad> data_cases = {
      {S({2, 4, 3, 3}), S({4, 3, 3, 3}), {2, 2}, {1, 1}, {1, 1}, {5, 6}, 1},
      {S({2, 6, 4, 4}), S({6, 2, 3, 3}), {1, 1}, {1, 1}, {1, 1}, {4, 4}, 3},
      {S({1, 4, 3, 3}), S({4, 4, 3, 3}), {1, 1}, {2, 2}, {2, 2}, {3, 3}, 1},
  };
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (const ConvGrad& g : data_cases) {
      add({"conv2d_backward_data",
           {t, t},
           {g.a, g.b},
           {{"strides", g.strides},
            {"paddings", g.paddings},
            {"dilations", g.dilations},
            {"input_hw", g.size},
            {"groups", g.groups}},
           {}});
    }
  }
  const std::vector<ConvGrad> filter_cases = {
      {S({2, 3, 5, 6}), S({2, 4, 3, 3}), {2, 2}, {1, 1}, {1, 1}, {3, 3}, 1},
      {S({2, 6, 4, 4}), S({2, 6, 4, 4}), {1, 1}, {1, 1}, {1, 1}, {3, 3}, 3},
      {S({1, 2, 5, 5}), S({1, 4, 3, 3}), {1, 1}, {1, 1}, {2, 2}, {3, 3}, 1},
  };
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (const ConvGrad& g : filter_cases) {
      add({"conv2d_backward_filter",
           {t, t},
           {g.a, g.b},
           {{"strides", g.strides},
            {"paddings", g.paddings},
            {"dilations", g.dilations},
            {"kernel_hw", g.size},
            {"groups", g.groups}},
           {}});
    }
  }
  return cases;
}

/// Random values of `domain` into `t`.
inline void FillDomain(TypedTensor& t, Domain domain, std::mt19937_64& rng) {
  const ir::Type& type = t.type();
  std::uniform_real_distribution<double> unit(0, 1);
  for (int64_t i = 0; i < t.size(); ++i) {
    double u = unit(rng), v;
    if (type.is_bool()) {
      v = u < 0.5;
    } else if (domain == Domain::kSmallInt) {
      v = std::floor(u * 5) - 2;
    } else if (domain == Domain::kIndex) {
      v = std::floor(u * 3);
    } else if (domain == Domain::kNearOne) {
      if (type.is_float()) {
        v = 0.5 + u;
      } else {
        v = type.is_uint() ? (u < 0.5 ? 1 : 2) : (u < 0.5 ? -1 : 1);
      }
    } else if (domain == Domain::kUnit) {
      v = type.is_float() ? -0.999 + 1.998 * u : std::floor(u * 3) - 1;
    } else if (domain == Domain::kSpecial && type.is_float() && unit(rng) < 0.25) {
      const double specials[] = {INFINITY, -INFINITY, NAN, 0.0, -0.0};
      v = specials[std::min<int>(4, static_cast<int>(u * 5))];
    } else if (domain == Domain::kIntEdges && type.is_int() && i < 4) {
      const double lo = -std::ldexp(1.0, type.bits() - 1);
      const double edges[] = {lo, -lo - 1, -1, 0};
      v = edges[i];
    } else if (domain == Domain::kHalves) {
      v = (std::floor(u * 17) - 8) * 0.5;
    } else if (!type.is_float()) {
      v = domain == Domain::kPositive ? 1 + std::floor(u * 5) : std::floor(u * 11) - 5;
    } else if (domain == Domain::kPositive) {
      v = 0.1 + 2.9 * u;
    } else if (domain == Domain::kWide) {
      v = -300 + 600 * u;
    } else if (domain == Domain::kHuge) {
      v = (2 * u - 1) * 1e20;
    } else if (domain == Domain::kLarge) {
      v = std::copysign(300 * std::pow(1e4, std::fabs(2 * u - 1)), u - 0.5);
    } else {
      v = -2 + 4 * u;
      if (domain == Domain::kWithNaN && unit(rng) < 0.125) v = NAN;
    }
    if (type.is_uint() && v < 0) v = -v;
    t.Set(i, v);
  }
}

/// Runs a compiled entry on host tensors (inputs then outputs); x86 calls it directly, the GPU
/// test copies through the device.
using Executor = std::function<void(const ir::Module&, std::vector<TypedTensor*>&)>;

/// The graph of the one-op program of `c` (inputs in0, in1, ...; every op output an output).
inline absl::StatusOr<hlir::Graph> CaseGraph(const OpCase& c) {
  frontend::NetBuilder b;
  std::vector<frontend::Var> in;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    in.push_back(b.CreateInput(c.dtypes[i], c.shapes[i], "in" + std::to_string(i)));
  }
  for (const auto& v : b.Op(c.op, in, c.attrs)) b.MarkOutput(v);
  auto program = b.Build();
  if (!program.ok()) return program.status();
  return frontend::BuildGraph(*program);
}

/// Builds the one-op program of `c`, compiles it for `target`, runs it with `exec` on fresh
/// random inputs and compares every output with the reference interpreter.
inline void RunOpCase(const OpCase& c, const ir::Target& target, const Executor& exec) {
  SCOPED_TRACE(c.Describe());
  auto graph = CaseGraph(c);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return;
  auto module = hlir::CompileGraph(*graph, target, "op_case");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return;

  // Fresh data each run; CINN_LIKE_TEST_SEED=<the seed a failure printed> replays it.
  static std::random_device rd;
  uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  if (const char* fixed = std::getenv("CINN_LIKE_TEST_SEED"))
    seed = std::strtoull(fixed, nullptr, 10);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::unique_ptr<TypedTensor>> owned;
  std::vector<TypedTensor*> args;
  std::vector<hlir::HostTensor> ref_in, abs_in;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    std::vector<int64_t> dims = Concrete(c.shapes[i]);
    owned.push_back(std::make_unique<TypedTensor>(hlir::ToIrType(c.dtypes[i]), dims));
    FillDomain(*owned.back(), c.domains[i], rng);
    hlir::HostTensor h(c.dtypes[i], dims);
    for (int64_t k = 0; k < h.size(); ++k) h.data[k] = owned.back()->Get(k);
    ref_in.push_back(h);
    for (double& v : h.data) v = std::fabs(v);
    abs_in.push_back(h);
    args.push_back(owned.back().get());
  }
  auto want = hlir::RunReference(*graph, ref_in);
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return;
  absl::StatusOr<std::vector<hlir::HostTensor>> scale = want;
  if (SumLike(c.op)) scale = hlir::RunReference(*graph, abs_in);
  EXPECT_TRUE(scale.ok()) << scale.status();
  if (!scale.ok()) return;
  for (const hlir::HostTensor& w : *want) {
    owned.push_back(std::make_unique<TypedTensor>(hlir::ToIrType(w.dtype), w.shape));
    for (int64_t k = 0; k < w.size(); ++k) owned.back()->Set(k, -12345);  // poison
    args.push_back(owned.back().get());
  }
  exec(*module, args);
  if (::testing::Test::HasFatalFailure()) return;
  for (size_t o = 0; o < want->size(); ++o) {
    const hlir::HostTensor& w = (*want)[o];
    const TypedTensor& got = *args[c.shapes.size() + o];
    Tolerance tol = ToleranceFor(w.dtype);
    if (ByQuadrature(c.op) && w.dtype == DType::kFloat64) tol.rtol *= 10;
    double amplitude = 0;
    const bool by_amplitude = Oscillating(c.op) || RoundsOperands(c.op, w.dtype);
    for (int64_t k = 0; by_amplitude && k < w.size(); ++k) {
      if (std::isfinite(w.data[k])) amplitude = std::max(amplitude, std::fabs(w.data[k]));
    }
    int bad = 0;
    for (int64_t k = 0; k < w.size() && bad < 5; ++k) {
      double g = got.Get(k), e = w.data[k];
      double s = std::max({std::fabs(e), std::fabs((*scale)[o].data[k]), amplitude});
      // An infinite result must be met exactly (inf - anything is within inf * rtol).
      bool ok = (std::isnan(g) && std::isnan(e)) || g == e ||
                (std::isfinite(e) && std::fabs(g - e) <= tol.atol + tol.rtol * s);
      if (!ok) {
        ++bad;
        ADD_FAILURE() << "output " << o << " element " << k << ": got " << g << ", want " << e;
      }
    }
  }
}

}  // namespace cinn_like::testing
