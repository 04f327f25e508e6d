/// \file Elementwise and broadcast ops: unary math, activations, casts, binary arithmetic,
/// comparisons, logic and where. Semantics follow PyTorch (and numpy broadcasting); each op's
/// comment says where a choice was made.
#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using ops::DTypeClass;
using UnaryFn = std::function<double(double)>;
using BinaryFn = std::function<double(double, double)>;
/// Builds the scalar function of an op from its attributes (validating them).
using UnaryMaker = std::function<absl::StatusOr<UnaryFn>(const AttributeMap&, const std::string&)>;
/// Binary makers also see the operands' dtype (integer division needs a rounding mode).
using BinaryMaker =
    std::function<absl::StatusOr<BinaryFn>(const AttributeMap&, const std::string&, DType)>;

enum class OutDType : uint8_t { kSame, kBool };

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

UnaryMaker Plain(double (*fn)(double)) {
  return [fn](const AttributeMap&, const std::string&) -> absl::StatusOr<UnaryFn> {
    return UnaryFn(fn);
  };
}
BinaryMaker Plain2(double (*fn)(double, double)) {
  return [fn](const AttributeMap&, const std::string&, DType) -> absl::StatusOr<BinaryFn> {
    return BinaryFn(fn);
  };
}

TensorDesc WithDType(TensorDesc d, DType t) {
  d.dtype = t;
  return d;
}

void RegisterUnary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                   UnaryMaker make) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::kElementwise;
  def.compute = ops::UnaryCompute(name);
  def.infer = [name, accepts, out, make](
                  const std::vector<TensorDesc>& in,
                  const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    absl::Status s = ops::CheckDType(name, 0, in[0], accepts);
    if (!s.ok()) return s;
    auto fn = make(attrs, name);  // validates the attributes
    if (!fn.ok()) return fn.status();
    return std::vector<TensorDesc>{out == OutDType::kBool ? WithDType(in[0], DType::kBool) : in[0]};
  };
  def.reference = [name, make](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) -> absl::Status {
    auto fn = make(attrs, name);
    if (!fn.ok()) return fn.status();
    for (int64_t i = 0; i < in[0]->size(); ++i) outs[0].data[i] = (*fn)(in[0]->data[i]);
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

void RegisterBinary(OpRegistry& r, const std::string& name, DTypeClass accepts, OutDType out,
                    bool same_dtype, BinaryMaker make) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::kBroadcast;
  def.min_inputs = def.max_inputs = 2;
  def.compute = ops::BinaryCompute(name);
  def.infer = [=](const std::vector<TensorDesc>& in,
                  const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    for (int i = 0; i < 2; ++i) {
      absl::Status s = ops::CheckDType(name, i, in[i], accepts);
      if (!s.ok()) return s;
    }
    if (same_dtype) {
      absl::Status s = ops::CheckSameDType(name, in);
      if (!s.ok()) return s;
    }
    auto fn = make(attrs, name, in[0].dtype);
    if (!fn.ok()) return fn.status();
    auto shape = ops::BroadcastAll(name, in);
    if (!shape.ok()) return shape.status();
    return std::vector<TensorDesc>{
        TensorDesc{out == OutDType::kBool ? DType::kBool : in[0].dtype, *shape}};
  };
  def.reference = [name, make](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) -> absl::Status {
    auto fn = make(attrs, name, in[0]->dtype);
    if (!fn.ok()) return fn.status();
    HostTensor& o = outs[0];
    int64_t flat = 0;
    ForEachIndex(o.shape, [&](const std::vector<int64_t>& idx) {
      o.data[flat++] = (*fn)(in[0]->data[BroadcastIndex(in[0]->shape, idx)],
                             in[1]->data[BroadcastIndex(in[1]->shape, idx)]);
    });
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

absl::StatusOr<UnaryFn> MakeLeakyRelu(const AttributeMap& attrs, const std::string& op) {
  auto slope = GetFloat(attrs, "negative_slope", op, 0.01);
  if (!slope.ok()) return slope.status();
  double a = *slope;
  return UnaryFn([a](double x) { return x >= 0 ? x : a * x; });
}

/// gelu: approximate "none" is x * Phi(x) with erf; "tanh" is PyTorch's tanh approximation.
absl::StatusOr<UnaryFn> MakeGelu(const AttributeMap& attrs, const std::string& op) {
  auto approx = GetString(attrs, "approximate", op, "none");
  if (!approx.ok()) return approx.status();
  if (*approx == "none") {
    return UnaryFn([](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); });
  }
  if (*approx == "tanh") {
    return UnaryFn([](double x) {
      const double k = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    });
  }
  return absl::InvalidArgumentError(absl::StrCat("op ", op, ": attribute 'approximate' is \"",
                                                 *approx, "\", expected \"none\" or \"tanh\""));
}

/// softplus with PyTorch's beta (default 1) and threshold (default 20, linear above it).
absl::StatusOr<UnaryFn> MakeSoftplus(const AttributeMap& attrs, const std::string& op) {
  auto beta = GetFloat(attrs, "beta", op, 1.0);
  if (!beta.ok()) return beta.status();
  auto threshold = GetFloat(attrs, "threshold", op, 20.0);
  if (!threshold.ok()) return threshold.status();
  double b = *beta, t = *threshold;
  return UnaryFn([b, t](double x) { return x * b > t ? x : std::log1p(std::exp(b * x)) / b; });
}

/// clip to [min, max]; either bound may be absent (no bound on that side).
absl::StatusOr<UnaryFn> MakeClip(const AttributeMap& attrs, const std::string& op) {
  const double inf = std::numeric_limits<double>::infinity();
  auto lo = GetFloat(attrs, "min", op, -inf);
  if (!lo.ok()) return lo.status();
  auto hi = GetFloat(attrs, "max", op, inf);
  if (!hi.ok()) return hi.status();
  double a = *lo, b = *hi;
  return UnaryFn([a, b](double x) { return std::isnan(x) ? x : std::min(std::max(x, a), b); });
}

/// div: PyTorch's rounding_mode: absent or "" is true division (float dtypes only); "trunc"
/// rounds toward zero, "floor" toward negative infinity. Integer division by zero: the
/// interpreter stores 0 (PyTorch raises; generated code must not trap either).
absl::StatusOr<BinaryFn> MakeDiv(const AttributeMap& attrs, const std::string& op, DType t) {
  auto mode = GetString(attrs, "rounding_mode", op, "");
  if (!mode.ok()) return mode.status();
  if (mode->empty() && !IsFloat(t)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op ", op, ": true division of ", DTypeName(t),
        " tensors needs a float dtype; cast first or set rounding_mode \"trunc\" or \"floor\""));
  }
  if (mode->empty()) return BinaryFn([](double a, double b) { return a / b; });
  if (*mode == "trunc") return BinaryFn([](double a, double b) { return std::trunc(a / b); });
  if (*mode == "floor") return BinaryFn([](double a, double b) { return std::floor(a / b); });
  return absl::InvalidArgumentError(absl::StrCat("op ", op, ": attribute 'rounding_mode' is \"",
                                                 *mode,
                                                 "\", expected \"\", \"trunc\" or \"floor\""));
}

/// mod: Python's and PyTorch's remainder (the sign of the divisor), not C's fmod.
double Remainder(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// maximum / minimum propagate NaN, as PyTorch does.
double Maximum(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double Minimum(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

void RegisterCast(OpRegistry& r) {
  OpDef def;
  def.name = "cast";
  def.pattern = OpPattern::kElementwise;
  def.compute = ops::CastCompute();
  def.infer = [](const std::vector<TensorDesc>& in,
                 const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    auto name = GetString(attrs, "dtype", "cast");
    if (!name.ok()) return name.status();
    auto t = ParseDType(*name);
    if (!t.ok()) return absl::InvalidArgumentError("op cast: " + std::string(t.status().message()));
    return std::vector<TensorDesc>{WithDType(in[0], *t)};
  };
  // The interpreter's rounding to the output dtype is the cast itself.
  def.reference = [](const std::vector<const HostTensor*>& in, const AttributeMap&,
                     std::vector<HostTensor>& outs) {
    outs[0].data = in[0]->data;
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

void RegisterWhere(OpRegistry& r) {
  OpDef def;
  def.name = "where";
  def.pattern = OpPattern::kBroadcast;
  def.min_inputs = def.max_inputs = 3;
  def.compute = ops::WhereCompute();
  def.infer = [](const std::vector<TensorDesc>& in,
                 const AttributeMap&) -> absl::StatusOr<std::vector<TensorDesc>> {
    if (in[0].dtype != DType::kBool) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op where: input 0 (condition: ", in[0].ToString(), ") must have dtype bool"));
    }
    absl::Status s = ops::CheckSameDType("where", {in[1], in[2]});
    if (!s.ok()) return s;
    auto shape = ops::BroadcastAll("where", in);
    if (!shape.ok()) return shape.status();
    return std::vector<TensorDesc>{TensorDesc{in[1].dtype, *shape}};
  };
  def.reference = [](const std::vector<const HostTensor*>& in, const AttributeMap&,
                     std::vector<HostTensor>& outs) {
    HostTensor& o = outs[0];
    int64_t flat = 0;
    ForEachIndex(o.shape, [&](const std::vector<int64_t>& idx) {
      bool c = in[0]->data[BroadcastIndex(in[0]->shape, idx)] != 0;
      const HostTensor* src = c ? in[1] : in[2];
      o.data[flat++] = src->data[BroadcastIndex(src->shape, idx)];
    });
    return absl::OkStatus();
  };
  r.Register(std::move(def));
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  const auto kF = DTypeClass::kFloat, kN = DTypeClass::kNumeric, kA = DTypeClass::kAny;
  const auto same = OutDType::kSame, boolean = OutDType::kBool;
  RegisterUnary(r, "neg", kN, same, Plain([](double x) { return -x; }));
  RegisterUnary(r, "abs", kN, same, Plain([](double x) { return std::fabs(x); }));
  RegisterUnary(r, "exp", kF, same, Plain([](double x) { return std::exp(x); }));
  RegisterUnary(r, "log", kF, same, Plain([](double x) { return std::log(x); }));
  RegisterUnary(r, "log1p", kF, same, Plain([](double x) { return std::log1p(x); }));
  RegisterUnary(r, "sqrt", kF, same, Plain([](double x) { return std::sqrt(x); }));
  RegisterUnary(r, "rsqrt", kF, same, Plain([](double x) { return 1.0 / std::sqrt(x); }));
  RegisterUnary(r, "reciprocal", kF, same, Plain([](double x) { return 1.0 / x; }));
  RegisterUnary(r, "sin", kF, same, Plain([](double x) { return std::sin(x); }));
  RegisterUnary(r, "cos", kF, same, Plain([](double x) { return std::cos(x); }));
  RegisterUnary(r, "tanh", kF, same, Plain([](double x) { return std::tanh(x); }));
  RegisterUnary(r, "sigmoid", kF, same, Plain(Sigmoid));
  RegisterUnary(r, "relu", kN, same,
                Plain([](double x) { return x > 0 ? x : (std::isnan(x) ? x : 0.0); }));
  RegisterUnary(r, "relu6", kN, same, Plain([](double x) {
                  return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0);
                }));
  RegisterUnary(r, "leaky_relu", kF, same, MakeLeakyRelu);
  RegisterUnary(r, "gelu", kF, same, MakeGelu);
  RegisterUnary(r, "silu", kF, same, Plain([](double x) { return x * Sigmoid(x); }));
  RegisterUnary(r, "softplus", kF, same, MakeSoftplus);
  RegisterUnary(r, "floor", kN, same, Plain([](double x) { return std::floor(x); }));
  RegisterUnary(r, "ceil", kN, same, Plain([](double x) { return std::ceil(x); }));
  // round: half to even, as torch.round and numpy.round.
  RegisterUnary(r, "round", kN, same, Plain([](double x) { return std::nearbyint(x); }));
  RegisterUnary(r, "sign", kN, same,
                Plain([](double x) { return std::isnan(x) ? x : double((x > 0) - (x < 0)); }));
  RegisterUnary(r, "logical_not", kA, boolean, Plain([](double x) { return double(x == 0); }));
  RegisterUnary(r, "isnan", kA, boolean, Plain([](double x) { return double(std::isnan(x)); }));
  RegisterUnary(r, "clip", kN, same, MakeClip);
  RegisterCast(r);

  RegisterBinary(r, "add", kN, same, true, Plain2([](double a, double b) { return a + b; }));
  RegisterBinary(r, "sub", kN, same, true, Plain2([](double a, double b) { return a - b; }));
  RegisterBinary(r, "mul", kN, same, true, Plain2([](double a, double b) { return a * b; }));
  RegisterBinary(r, "div", kN, same, true, MakeDiv);
  RegisterBinary(r, "pow", kN, same, true,
                 Plain2([](double a, double b) { return std::pow(a, b); }));
  RegisterBinary(r, "maximum", kN, same, true, Plain2(Maximum));
  RegisterBinary(r, "minimum", kN, same, true, Plain2(Minimum));
  RegisterBinary(r, "mod", kN, same, true, Plain2(Remainder));
  RegisterBinary(r, "equal", kA, boolean, true,
                 Plain2([](double a, double b) { return double(a == b); }));
  RegisterBinary(r, "not_equal", kA, boolean, true,
                 Plain2([](double a, double b) { return double(a != b); }));
  RegisterBinary(r, "less", kN, boolean, true,
                 Plain2([](double a, double b) { return double(a < b); }));
  RegisterBinary(r, "less_equal", kN, boolean, true,
                 Plain2([](double a, double b) { return double(a <= b); }));
  RegisterBinary(r, "greater", kN, boolean, true,
                 Plain2([](double a, double b) { return double(a > b); }));
  RegisterBinary(r, "greater_equal", kN, boolean, true,
                 Plain2([](double a, double b) { return double(a >= b); }));
  RegisterBinary(r, "logical_and", kA, boolean, false,
                 Plain2([](double a, double b) { return double(a != 0 && b != 0); }));
  RegisterBinary(r, "logical_or", kA, boolean, false,
                 Plain2([](double a, double b) { return double(a != 0 || b != 0); }));
  RegisterBinary(r, "logical_xor", kA, boolean, false,
                 Plain2([](double a, double b) { return double((a != 0) != (b != 0)); }));
  RegisterWhere(r);
}

}  // namespace cinn_like::hlir
