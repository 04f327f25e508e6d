/// \file The constant op: a tensor whose values the graph holds (what constant folding
/// produces). No inputs; attributes "values" (float list, row-major, already rounded to the
/// dtype), "shape" (int list) and "dtype" (default float32). Integer values above 2^53 lose
/// precision in the float list. Its value is known at compile time (OpDef::compile_time_value):
/// its compute is a select chain over the row-major index, which the graph compiler inlines
/// into its readers; a chain would be a poor kernel for many elements, so constants of more
/// than kMaxFoldedConstantElements are Unimplemented (pass them as graph inputs). An integer
/// constant whose values are an affine function of its indices (an arange, a table of row
/// offsets), of any size, is that function instead of a chain: HF's padding mask indexes the
/// attention mask by such a table, per element of a [B, H, S, S] softmax.
#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "hlir/host_tensor.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/pass/constant_folding.h"

namespace cinn_like::hlir {
namespace {

absl::StatusOr<std::vector<TensorDesc>> InferConstant(const std::vector<TensorDesc>&,
                                                      const AttributeMap& attrs) {
  auto shape = GetInts(attrs, "shape", "constant");
  if (!shape.ok()) return shape.status();
  auto dtype = GetString(attrs, "dtype", "constant", "float32");
  if (!dtype.ok()) return dtype.status();
  auto t = ParseDType(*dtype);
  if (!t.ok())
    return absl::InvalidArgumentError("op constant: " + std::string(t.status().message()));
  auto it = attrs.find("values");
  if (it == attrs.end() || !std::holds_alternative<std::vector<double>>(it->second)) {
    return absl::InvalidArgumentError("op constant: attribute 'values' is missing (a float list)");
  }
  int64_t count = 1;
  for (int64_t d : *shape) {
    if (d < 0) return absl::InvalidArgumentError("op constant: shape sizes must be >= 0");
    if (__builtin_mul_overflow(count, d, &count) || count > kMaxElements) {
      return absl::OutOfRangeError(absl::StrCat("op constant: shape ",
                                                ShapeToString(MakeShape(*shape)), " has more than ",
                                                kMaxElements, " elements"));
    }
  }
  size_t n = std::get<std::vector<double>>(it->second).size();
  if (static_cast<int64_t>(n) != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("op constant: attribute 'values' holds ", n, " values, shape ",
                     ShapeToString(MakeShape(*shape)), " needs ", count));
  }
  return std::vector<TensorDesc>{TensorDesc{*t, MakeShape(*shape)}};
}

absl::Status ReferenceConstant(const std::vector<const HostTensor*>&, const AttributeMap& attrs,
                               std::vector<HostTensor>& outs) {
  outs[0].data = std::get<std::vector<double>>(attrs.at("values"));
  return absl::OkStatus();
}

/// The coefficients (c0, c) with values[k] = c0 + sum_d c[d] * i[d] at every row-major index
/// i of `dims`, when there are such integers and no partial sum leaves type `t` (an integer
/// type); none otherwise.
std::optional<std::pair<double, std::vector<double>>> AffineValues(const std::vector<double>& v,
                                                                   const std::vector<int64_t>& dims,
                                                                   const ir::Type& t) {
  if (!t.is_integer() || v.empty()) return std::nullopt;
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<double> c(dims.size(), 0.0);
  double reach = std::abs(v[0]);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1) c[d] = v[strides[d]] - v[0];
    reach += std::abs(c[d]) * static_cast<double>(dims[d] > 0 ? dims[d] - 1 : 0);
  }
  if (t.is_uint() && std::any_of(c.begin(), c.end(), [](double x) { return x < 0; })) {
    return std::nullopt;  // no negative coefficient in an unsigned type
  }
  const int bits = t.bits() - (t.is_uint() ? 0 : 1);
  if (reach >= std::ldexp(1.0, std::min(bits, 53))) return std::nullopt;
  for (size_t k = 0; k < v.size(); ++k) {
    double want = v[0];
    for (size_t d = 0; d < dims.size(); ++d) {
      want += c[d] * static_cast<double>(static_cast<int64_t>(k) / strides[d] % dims[d]);
    }
    if (want != v[k]) return std::nullopt;
  }
  return std::make_pair(v[0], c);
}

absl::StatusOr<std::vector<ir::Tensor>> ComputeConstant(const std::vector<ir::Tensor>&,
                                                        const AttributeMap& attrs,
                                                        const std::vector<ComputeOutput>& outs,
                                                        const std::string& name) {
  auto it = attrs.find("values");
  const auto* values = it == attrs.end() ? nullptr : std::get_if<std::vector<double>>(&it->second);
  if (!values) return absl::InvalidArgumentError("attribute 'values' is missing");
  const std::vector<ir::Expr> shape = outs[0].shape;
  const std::vector<double> v = *values;
  const ir::Type t = outs[0].type;
  auto dims = GetInts(attrs, "shape", "constant");
  if (!dims.ok()) return dims.status();
  if (auto affine = AffineValues(v, *dims, t)) {
    const auto [c0, c] = *affine;
    return std::vector<ir::Tensor>{ir::Compute(
        shape,
        [&](const std::vector<ir::Expr>& i) {
          ir::Expr e = ops::Const(t, c0);
          for (size_t d = 0; d < i.size(); ++d) {
            if (c[d] == 0) continue;
            ir::Expr index = i[d].type() == t ? i[d] : ir::Cast::Make(t, i[d]);
            e = e + ops::Const(t, c[d]) * index;
          }
          return e;
        },
        name)};
  }
  if (static_cast<int64_t>(v.size()) > kMaxFoldedConstantElements) {
    return absl::UnimplementedError(absl::StrCat(
        "has ", v.size(), " elements; constants of more than ", kMaxFoldedConstantElements,
        " elements are not supported (pass them as graph inputs)"));
  }
  return std::vector<ir::Tensor>{ir::Compute(
      shape,
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr flat(0);
        for (size_t d = 0; d < i.size(); ++d) flat = flat * shape[d] + i[d];
        ir::Expr e = ops::Const(t, v.empty() ? 0.0 : v.back());
        for (int k = static_cast<int>(v.size()) - 2; k >= 0; --k) {
          e = ir::Select::Make(flat == ir::Expr(k), ops::Const(t, v[k]), e);
        }
        return e;
      },
      name)};
}

}  // namespace

void RegisterConstantOps(OpRegistry& r) {
  OpDef def{"constant", OpPattern::kOpaque, 0, 0, 1, InferConstant, ReferenceConstant};
  def.compute = ComputeConstant;
  def.compile_time_value = true;
  r.Register(std::move(def));
}

}  // namespace cinn_like::hlir
