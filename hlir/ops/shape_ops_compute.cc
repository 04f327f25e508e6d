/// \file The injective shape ops in lang: each output element reads one input element at a
/// remapped index (slice's compute lives next to its attribute parsing in shape_ops.cc).
#include <algorithm>

#include "hlir/ops/compute_util.h"
#include "ir/structural_equal.h"

namespace cinn_like::hlir::ops {
namespace {

using ir::Expr;
using ir::Tensor;
using Tensors = absl::StatusOr<std::vector<Tensor>>;
using Body = std::function<Expr(const Indices&)>;

Tensors One(const ComputeOutput& out, const Body& body, const std::string& name) {
  return std::vector<Tensor>{ir::Compute(out.shape, body, name)};
}

/// A run of input dims [from_begin, from_end) and output dims [to_begin, to_end) with the same
/// number of elements: an output index of the run reads an input index of the run only.
struct DimGroup {
  size_t from_begin, from_end, to_begin, to_end;
};

/// The reshape's dims as groups, smallest first: a dim kept as it is (GPT-2's vocabulary axis
/// of [4, 256, 50257] -> [1024, 50257]) is a group of its own, so its index passes through
/// instead of a division and a remainder by the dim's size on every element. Static dims
/// group by their products, symbolic ones only with the same expression on both sides; dims
/// of size 1 join the group before them (leading ones the first). One group of every dim where
/// nothing finer is proven.
std::vector<DimGroup> ReshapeGroups(const std::vector<Expr>& from, const std::vector<Expr>& to) {
  const std::vector<DimGroup> whole = {{0, from.size(), 0, to.size()}};
  std::vector<DimGroup> groups;
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    DimGroup g{i, i, j, j};
    if (i < from.size() && j < to.size() && (!ir::AsConstInt(from[i]) || !ir::AsConstInt(to[j]))) {
      if (!ir::StructuralEqual(from[i], to[j])) return whole;
      ++i, ++j;
    } else {
      // One dim of each side, then more of the side with fewer elements until both match.
      int64_t pa = 1, pb = 1;
      auto take = [](const std::vector<Expr>& dims, size_t* k, int64_t* p) {
        const int64_t* d = ir::AsConstInt(dims[*k]);
        if (!d) return false;
        *p *= *d;
        ++*k;
        return true;
      };
      if (i < from.size() && !take(from, &i, &pa)) return whole;
      if (j < to.size() && !take(to, &j, &pb)) return whole;
      while (pa != pb) {
        const bool grow_from = pa < pb;
        if (grow_from ? i == from.size() : j == to.size()) return whole;
        if (!(grow_from ? take(from, &i, &pa) : take(to, &j, &pb))) return whole;
      }
    }
    while (i < from.size() && ir::IsConstInt(from[i], 1)) ++i;  // size-1 dims join the group
    while (j < to.size() && ir::IsConstInt(to[j], 1)) ++j;
    g.from_end = i;
    g.to_end = j;
    groups.push_back(g);
  }
  return groups.empty() ? whole : groups;
}

}  // namespace

ComputeFn ReshapeCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap&,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    // Sizes as IR: constants, or the symbolic dims' expressions.
    std::vector<Expr> from = in[0]->shape, to = outs[0].shape;
    Tensor x = in[0];
    const std::vector<DimGroup> groups = ReshapeGroups(from, to);
    return One(
        outs[0],
        [&, from, to, groups](const Indices& o) {
          Indices idx(from.size(), Expr(0));
          for (const DimGroup& g : groups) {
            if (g.from_end - g.from_begin == 1 && g.to_end - g.to_begin == 1) {
              idx[g.from_begin] = o[g.to_begin];  // a dim kept as it is
              continue;
            }
            Expr flat(0);
            for (size_t d = g.to_begin; d < g.to_end; ++d) flat = flat * to[d] + o[d];
            for (size_t d = g.from_end; d-- > g.from_begin;) {
              idx[d] = d == g.from_begin ? flat : flat % from[d];
              flat = flat / from[d];
            }
          }
          return x(idx);
        },
        name);
  };
}

ComputeFn BroadcastToCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap&,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    return One(
        outs[0], [&](const Indices& o) { return BroadcastRead(in[0], o); }, name);
  };
}

ComputeFn TransposeCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    auto perm = GetInts(attrs, "perm", "transpose");
    if (!perm.ok()) return perm.status();
    return One(
        outs[0],
        [&](const Indices& o) {
          Indices idx(o.size());
          for (size_t d = 0; d < o.size(); ++d) idx[(*perm)[d]] = o[d];
          return in[0](idx);
        },
        name);
  };
}

ComputeFn ExpandDimsCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    int out_rank = static_cast<int>(outs[0].shape.size());
    auto axes = GetInts(attrs, "axes", "expand_dims");
    if (!axes.ok()) return axes.status();
    std::vector<bool> inserted(out_rank, false);
    for (int64_t a : *axes) inserted[a < 0 ? a + out_rank : a] = true;
    return One(
        outs[0],
        [&](const Indices& o) {
          Indices idx;
          for (int d = 0; d < out_rank; ++d) {
            if (!inserted[d]) idx.push_back(o[d]);
          }
          return in[0](idx);
        },
        name);
  };
}

ComputeFn SqueezeCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    auto axes = GetInts(attrs, "axes", "squeeze", std::vector<int64_t>{});
    if (!axes.ok()) return axes.status();
    int rank = static_cast<int>(in[0]->shape.size());
    std::vector<bool> drop(rank, false);
    for (int d = 0; d < rank; ++d) drop[d] = axes->empty() && ir::IsConstInt(in[0]->shape[d], 1);
    for (int64_t a : *axes) drop[a < 0 ? a + rank : a] = true;
    return One(
        outs[0],
        [&](const Indices& o) {
          Indices idx;
          size_t k = 0;
          for (int d = 0; d < rank; ++d) idx.push_back(drop[d] ? Expr(0) : o[k++]);
          return in[0](idx);
        },
        name);
  };
}

/// Inputs one concat tensor reads at most: each output element of a Select chain loads every
/// input (the selects evaluate both sides), so a concat of more inputs is a tree of concats of
/// at most this many (intermediate tensors `<name>_part<k>`, which x86 materializes and GPUs
/// inline), keeping the kernels' size and the loads per element bounded rather than linear in
/// the number of inputs.
constexpr size_t kMaxConcatInputs = 32;

/// `in` joined along `axis` into a tensor of `shape`: a Select chain from the last input back;
/// indices are clamped into each input so the loads a select evaluates on both sides stay in
/// bounds.
Tensor ConcatTree(const std::vector<Tensor>& in, int axis, std::vector<Expr> shape,
                  const std::string& name) {
  if (in.size() == 1) {  // a copy, whatever the axis' extent (symbolic too)
    return ir::Compute(
        shape, [&](const Indices& o) { return in[0](o); }, name);
  }
  if (in.size() > kMaxConcatInputs) {
    std::vector<Tensor> parts;
    for (size_t begin = 0; begin < in.size(); begin += kMaxConcatInputs) {
      std::vector<Tensor> group(in.begin() + begin,
                                in.begin() + std::min(in.size(), begin + kMaxConcatInputs));
      int64_t extent = 0;
      for (const Tensor& t : group) extent += *ir::AsConstInt(t->shape[axis]);
      shape[axis] = ir::IndexConst(extent);
      parts.push_back(
          ConcatTree(group, axis, shape, name + "_part" + std::to_string(parts.size())));
    }
    int64_t total = 0;
    for (const Tensor& t : parts) total += *ir::AsConstInt(t->shape[axis]);
    shape[axis] = ir::IndexConst(total);
    return ConcatTree(parts, axis, shape, name);
  }
  return ir::Compute(
      shape,
      [&](const Indices& o) {
        std::vector<int64_t> starts;
        int64_t offset = 0;
        for (const Tensor& t : in) {
          starts.push_back(offset);
          offset += *ir::AsConstInt(t->shape[axis]);
        }
        Expr value;
        for (int i = static_cast<int>(in.size()) - 1; i >= 0; --i) {
          int64_t extent = *ir::AsConstInt(in[i]->shape[axis]);
          if (extent == 0) continue;
          Indices idx = o;
          Expr local = o[axis] - ir::IndexConst(starts[i]);
          idx[axis] = ir::min(ir::max(local, Expr(0)), ir::IndexConst(extent - 1));
          Expr v = in[i](idx);
          value = value.defined()
                      ? ir::Select::Make(o[axis] < ir::IndexConst(starts[i] + extent), v, value)
                      : v;
        }
        return value;
      },
      name);
}

ComputeFn ConcatCompute() {
  return [](const std::vector<Tensor>& in, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    int out_rank = static_cast<int>(outs[0].shape.size());
    auto axis = GetInt(attrs, "axis", "concat", 0);
    if (!axis.ok()) return axis.status();
    int a = static_cast<int>(*axis < 0 ? *axis + out_rank : *axis);
    return std::vector<Tensor>{ConcatTree(in, a, outs[0].shape, name)};
  };
}

ComputeFn FillCompute() {
  return [](const std::vector<Tensor>&, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    auto value = GetFloat(attrs, "value", "fill");
    if (!value.ok()) return value.status();
    auto dtype = ParseDType(*GetString(attrs, "dtype", "fill", "float32"));
    if (!dtype.ok()) return dtype.status();
    double v = RoundToDType(*value, *dtype);
    ir::Type t = outs[0].type;
    return One(
        outs[0], [t, v](const Indices&) { return Const(t, v); }, name);
  };
}

ComputeFn ArangeCompute() {
  return [](const std::vector<Tensor>&, const AttributeMap& attrs,
            const std::vector<ComputeOutput>& outs, const std::string& name) -> Tensors {
    auto start = GetFloat(attrs, "start", "arange", 0.0);
    if (!start.ok()) return start.status();
    auto step = GetFloat(attrs, "step", "arange", 1.0);
    if (!step.ok()) return step.status();
    ir::Type t = outs[0].type, f64 = ir::Float(64);
    double b = *start, s = *step;
    return One(
        outs[0],
        [=](const Indices& o) {
          return CastTo(t, Const(f64, b) + ir::Cast::Make(f64, o[0]) * Const(f64, s));
        },
        name);
  };
}

}  // namespace cinn_like::hlir::ops
