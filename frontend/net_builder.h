/// \file NetBuilder: writes a Program op by op, as a framework's graph converter or a person
/// would. Every call checks the op at once (through the op registry's inference), so each Var
/// knows its dtype and shape; the first error sticks, later calls return invalid Vars, and
/// Build() returns that error naming the op, the inputs and their shapes.
///
///   NetBuilder b;
///   Var x = b.CreateInput(DType::kFloat32, {Dim::Symbol("n"), Dim::Known(64)}, "x");
///   Var y = b.Relu(b.Add(x, b.CreateInput(DType::kFloat32, MakeShape({64}), "bias")));
///   b.MarkOutput(y);
///   absl::StatusOr<Program> p = b.Build();
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/program.h"

namespace cinn_like::frontend {

/// A variable of the program being built: its name and desc (invalid after an error).
struct Var {
  std::string name;
  hlir::TensorDesc desc;
  bool valid() const { return !name.empty(); }
};

class NetBuilder {
 public:
  Var CreateInput(hlir::DType dtype, const hlir::Shape& shape, const std::string& name = "");
  /// Any registered op by name: the generic form every method below uses.
  std::vector<Var> Op(const std::string& op, const std::vector<Var>& inputs,
                      const hlir::AttributeMap& attrs = {});
  /// Marks a variable as an output, in call order.
  void MarkOutput(const Var& v);
  /// The program, or the first error.
  absl::StatusOr<Program> Build() const;
  const absl::Status& status() const { return status_; }

  // Unary.
  Var Neg(const Var& x) { return One("neg", {x}); }
  Var Abs(const Var& x) { return One("abs", {x}); }
  Var Exp(const Var& x) { return One("exp", {x}); }
  Var Log(const Var& x) { return One("log", {x}); }
  Var Log1p(const Var& x) { return One("log1p", {x}); }
  Var Sqrt(const Var& x) { return One("sqrt", {x}); }
  Var Rsqrt(const Var& x) { return One("rsqrt", {x}); }
  Var Reciprocal(const Var& x) { return One("reciprocal", {x}); }
  Var Sin(const Var& x) { return One("sin", {x}); }
  Var Cos(const Var& x) { return One("cos", {x}); }
  Var Erf(const Var& x) { return One("erf", {x}); }
  Var Tanh(const Var& x) { return One("tanh", {x}); }
  Var Sigmoid(const Var& x) { return One("sigmoid", {x}); }
  Var Relu(const Var& x) { return One("relu", {x}); }
  Var Relu6(const Var& x) { return One("relu6", {x}); }
  Var LeakyRelu(const Var& x, double slope = 0.01) {
    return One("leaky_relu", {x}, {{"negative_slope", slope}});
  }
  /// approximate: "none" (erf) or "tanh".
  Var Gelu(const Var& x, const std::string& approximate = "none") {
    return One("gelu", {x}, {{"approximate", approximate}});
  }
  Var Silu(const Var& x) { return One("silu", {x}); }
  Var Softplus(const Var& x) { return One("softplus", {x}); }
  Var Floor(const Var& x) { return One("floor", {x}); }
  Var Ceil(const Var& x) { return One("ceil", {x}); }
  Var Round(const Var& x) { return One("round", {x}); }
  Var Sign(const Var& x) { return One("sign", {x}); }
  Var LogicalNot(const Var& x) { return One("logical_not", {x}); }
  Var IsNan(const Var& x) { return One("isnan", {x}); }
  Var Cast(const Var& x, hlir::DType to) {
    return One("cast", {x}, {{"dtype", std::string(hlir::DTypeName(to))}});
  }
  Var Clip(const Var& x, double lo, double hi) {
    return One("clip", {x}, {{"min", lo}, {"max", hi}});
  }

  // Binary (numpy broadcasting) and where.
  Var Add(const Var& a, const Var& b) { return One("add", {a, b}); }
  Var Sub(const Var& a, const Var& b) { return One("sub", {a, b}); }
  Var Mul(const Var& a, const Var& b) { return One("mul", {a, b}); }
  /// rounding_mode: "" (true division), "trunc" or "floor".
  Var Div(const Var& a, const Var& b, const std::string& rounding_mode = "") {
    return rounding_mode.empty() ? One("div", {a, b})
                                 : One("div", {a, b}, {{"rounding_mode", rounding_mode}});
  }
  Var Pow(const Var& a, const Var& b) { return One("pow", {a, b}); }
  Var Maximum(const Var& a, const Var& b) { return One("maximum", {a, b}); }
  Var Minimum(const Var& a, const Var& b) { return One("minimum", {a, b}); }
  Var Mod(const Var& a, const Var& b) { return One("mod", {a, b}); }
  Var Equal(const Var& a, const Var& b) { return One("equal", {a, b}); }
  Var NotEqual(const Var& a, const Var& b) { return One("not_equal", {a, b}); }
  Var Less(const Var& a, const Var& b) { return One("less", {a, b}); }
  Var LessEqual(const Var& a, const Var& b) { return One("less_equal", {a, b}); }
  Var Greater(const Var& a, const Var& b) { return One("greater", {a, b}); }
  Var GreaterEqual(const Var& a, const Var& b) { return One("greater_equal", {a, b}); }
  Var LogicalAnd(const Var& a, const Var& b) { return One("logical_and", {a, b}); }
  Var LogicalOr(const Var& a, const Var& b) { return One("logical_or", {a, b}); }
  Var LogicalXor(const Var& a, const Var& b) { return One("logical_xor", {a, b}); }
  Var Where(const Var& cond, const Var& a, const Var& b) { return One("where", {cond, a, b}); }

  // Reductions (axes empty: all) and normalizations.
  Var ReduceSum(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
    return One("reduce_sum", {x}, {{"axes", axes}, {"keepdim", keepdim}});
  }
  Var ReduceMean(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
    return One("reduce_mean", {x}, {{"axes", axes}, {"keepdim", keepdim}});
  }
  Var ReduceMax(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
    return One("reduce_max", {x}, {{"axes", axes}, {"keepdim", keepdim}});
  }
  Var ReduceMin(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
    return One("reduce_min", {x}, {{"axes", axes}, {"keepdim", keepdim}});
  }
  Var ReduceProd(const Var& x, const std::vector<int64_t>& axes = {}, bool keepdim = false) {
    return One("reduce_prod", {x}, {{"axes", axes}, {"keepdim", keepdim}});
  }
  Var Argmax(const Var& x, int64_t axis, bool keepdim = false) {
    return One("argmax", {x}, {{"axis", axis}, {"keepdim", keepdim}});
  }
  Var Argmin(const Var& x, int64_t axis, bool keepdim = false) {
    return One("argmin", {x}, {{"axis", axis}, {"keepdim", keepdim}});
  }
  Var Softmax(const Var& x, int64_t axis = -1) { return One("softmax", {x}, {{"axis", axis}}); }
  Var LogSoftmax(const Var& x, int64_t axis = -1) {
    return One("log_softmax", {x}, {{"axis", axis}});
  }
  /// Normalizes over [axis, rank); scale and bias have that trailing shape.
  Var LayerNorm(const Var& x, const Var& scale, const Var& bias, int64_t axis = -1,
                double epsilon = 1e-5) {
    return One("layer_norm", {x, scale, bias}, {{"axis", axis}, {"epsilon", epsilon}});
  }
  Var RmsNorm(const Var& x, const Var& scale, int64_t axis = -1, double epsilon = 1e-5) {
    return One("rms_norm", {x, scale}, {{"axis", axis}, {"epsilon", epsilon}});
  }
  /// Inference batch norm over the channel axis (1 for NCHW).
  Var BatchNorm(const Var& x, const Var& scale, const Var& bias, const Var& mean,
                const Var& variance, double epsilon = 1e-5, int64_t axis = 1) {
    return One("batch_norm", {x, scale, bias, mean, variance},
               {{"epsilon", epsilon}, {"axis", axis}});
  }

  // Matmul.
  Var Matmul(const Var& x, const Var& y, bool transpose_x = false, bool transpose_y = false) {
    return One("matmul", {x, y}, {{"transpose_x", transpose_x}, {"transpose_y", transpose_y}});
  }
  /// x W^T (+ b), PyTorch's layout: W is [out_features, in_features].
  Var Linear(const Var& x, const Var& w) { return One("linear", {x, w}); }
  Var Linear(const Var& x, const Var& w, const Var& b) { return One("linear", {x, w, b}); }

  // Shape.
  Var Reshape(const Var& x, const std::vector<int64_t>& shape) {
    return One("reshape", {x}, {{"shape", shape}});
  }
  Var Transpose(const Var& x, const std::vector<int64_t>& perm) {
    return One("transpose", {x}, {{"perm", perm}});
  }
  Var BroadcastTo(const Var& x, const std::vector<int64_t>& shape) {
    return One("broadcast_to", {x}, {{"shape", shape}});
  }
  Var ExpandDims(const Var& x, const std::vector<int64_t>& axes) {
    return One("expand_dims", {x}, {{"axes", axes}});
  }
  Var Squeeze(const Var& x, const std::vector<int64_t>& axes = {}) {
    return One("squeeze", {x}, {{"axes", axes}});
  }
  Var Concat(const std::vector<Var>& xs, int64_t axis = 0) {
    return One("concat", xs, {{"axis", axis}});
  }
  Var Slice(const Var& x, const std::vector<int64_t>& axes, const std::vector<int64_t>& starts,
            const std::vector<int64_t>& ends, const std::vector<int64_t>& steps = {}) {
    hlir::AttributeMap a{{"axes", axes}, {"starts", starts}, {"ends", ends}};
    if (!steps.empty()) a["steps"] = steps;
    return One("slice", {x}, a);
  }
  Var Fill(const std::vector<int64_t>& shape, double value,
           hlir::DType dtype = hlir::DType::kFloat32) {
    return One(
        "fill", {},
        {{"shape", shape}, {"value", value}, {"dtype", std::string(hlir::DTypeName(dtype))}});
  }
  Var Arange(double start, double end, double step = 1, hlir::DType dtype = hlir::DType::kInt64) {
    return One("arange", {},
               {{"start", start},
                {"end", end},
                {"step", step},
                {"dtype", std::string(hlir::DTypeName(dtype))}});
  }

  // Convolution and pooling (NCHW; paddings {ph, pw} or {top, bottom, left, right}).
  /// weight [out_channels, in_channels / groups, kh, kw], PyTorch's layout and semantics.
  Var Conv2d(const Var& x, const Var& w, const std::vector<int64_t>& strides = {1, 1},
             const std::vector<int64_t>& paddings = {0, 0},
             const std::vector<int64_t>& dilations = {1, 1}, int64_t groups = 1) {
    return One("conv2d", {x, w}, ConvAttrs(strides, paddings, dilations, groups));
  }
  /// With a bias [out_channels].
  Var Conv2d(const Var& x, const Var& w, const Var& bias,
             const std::vector<int64_t>& strides = {1, 1},
             const std::vector<int64_t>& paddings = {0, 0},
             const std::vector<int64_t>& dilations = {1, 1}, int64_t groups = 1) {
    return One("conv2d", {x, w, bias}, ConvAttrs(strides, paddings, dilations, groups));
  }
  /// strides empty: the kernel size (PyTorch's default).
  Var MaxPool2d(const Var& x, const std::vector<int64_t>& kernel_size,
                const std::vector<int64_t>& strides = {},
                const std::vector<int64_t>& paddings = {0, 0}) {
    return One("max_pool2d", {x}, PoolAttrs(kernel_size, strides, paddings));
  }
  /// count_include_pad: divide by the whole window (PyTorch's default) or its part inside x.
  Var AvgPool2d(const Var& x, const std::vector<int64_t>& kernel_size,
                const std::vector<int64_t>& strides = {},
                const std::vector<int64_t>& paddings = {0, 0}, bool count_include_pad = true) {
    hlir::AttributeMap a = PoolAttrs(kernel_size, strides, paddings);
    a["count_include_pad"] = count_include_pad;
    return One("avg_pool2d", {x}, a);
  }

  // Indexing.
  /// torch.index_select / Paddle's gather: x's slices at `index` (int32/int64 vector) along axis.
  Var Gather(const Var& x, const Var& index, int64_t axis = 0) {
    return One("gather", {x, index}, {{"axis", axis}});
  }
  Var IndexSelect(const Var& x, int64_t axis, const Var& index) { return Gather(x, index, axis); }
  /// One output per size in `sections` (one may be -1: the rest of the axis).
  std::vector<Var> Split(const Var& x, const std::vector<int64_t>& sections, int64_t axis = 0) {
    return Op("split", {x}, {{"sections", sections}, {"axis", axis}});
  }
  /// paddings: [before, after] for each dim in order; the new elements are `value`.
  Var Pad(const Var& x, const std::vector<int64_t>& paddings, double value = 0) {
    return One("pad", {x}, {{"paddings", paddings}, {"value", value}});
  }
  /// torch.index_add: x with updates[..., k, ...] added at index[k] (an int32/int64 vector of
  /// length K) along axis; updates is x's shape with that dim K. Repeated indices accumulate.
  Var IndexAdd(const Var& x, const Var& index, const Var& updates, int64_t axis = 0) {
    return One("index_add", {x, index, updates}, {{"axis", axis}});
  }
  Var OneHot(const Var& index, int64_t depth, hlir::DType dtype = hlir::DType::kFloat32) {
    return One("one_hot", {index},
               {{"depth", depth}, {"dtype", std::string(hlir::DTypeName(dtype))}});
  }

 private:
  static hlir::AttributeMap ConvAttrs(const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& paddings,
                                      const std::vector<int64_t>& dilations, int64_t groups) {
    return {
        {"strides", strides}, {"paddings", paddings}, {"dilations", dilations}, {"groups", groups}};
  }
  static hlir::AttributeMap PoolAttrs(const std::vector<int64_t>& kernel_size,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& paddings) {
    hlir::AttributeMap a{{"kernel_size", kernel_size}, {"paddings", paddings}};
    if (!strides.empty()) a["strides"] = strides;
    return a;
  }
  /// Op with a single output.
  Var One(const std::string& op, const std::vector<Var>& inputs,
          const hlir::AttributeMap& attrs = {});

  Program program_;
  hlir::Graph graph_;  // kept in step with program_: inference and name checks
  absl::Status status_;
};

}  // namespace cinn_like::frontend
