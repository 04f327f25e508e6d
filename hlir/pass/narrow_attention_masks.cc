/// \file Attention masks read in their narrow form (narrow_attention_masks.h).
#include "hlir/pass/narrow_attention_masks.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/attention.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// `inner` with axes of 1 in front up to `rank` axes.
Shape LeftPadded(const Shape& inner, size_t rank) {
  Shape s(rank - inner.size(), Dim::Known(1));
  s.insert(s.end(), inner.begin(), inner.end());
  return s;
}

/// The broadcast of `shapes` (hlir::BroadcastShapes, numpy's rule), or nullopt where they do
/// not broadcast.
std::optional<Shape> Broadcast(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) {
    auto next = BroadcastShapes(out, s);
    if (!next.ok()) return std::nullopt;
    out = *std::move(next);
  }
  return out;
}

/// Whether `node` makes one value everywhere: a fill, or a constant whose values are all equal
/// (signs of zero too).
bool IsUniform(const Node& node) {
  if (node.op == "fill") return true;
  if (node.op != "constant") return false;
  auto it = node.attrs.find("values");
  if (it == node.attrs.end() || !std::holds_alternative<std::vector<double>>(it->second)) {
    return false;
  }
  const auto& values = std::get<std::vector<double>>(it->second);
  return !values.empty() && std::all_of(values.begin(), values.end(), [&](double x) {
    return x == values[0] && std::signbit(x) == std::signbit(values[0]);
  });
}

/// The attributes of a fill over `rank` axes of 1 making uniform node `node`'s value: a fill's
/// own attributes with the shape replaced (its value as written), or a constant's first value.
AttributeMap UniformFill(const Node& node, size_t rank, DType dtype) {
  AttributeMap attrs;
  if (node.op == "fill") {
    attrs = node.attrs;
  } else {
    attrs["value"] = std::get<std::vector<double>>(node.attrs.at("values")).front();
    attrs["dtype"] = std::string(DTypeName(dtype));
  }
  attrs["shape"] = std::vector<int64_t>(rank, 1);
  return attrs;
}

class Narrower {
 public:
  Narrower(const Graph& graph, GraphRewriter& rw) : graph_(graph), rw_(rw) {}

  /// The shape of `v`'s narrow form (v's rank; each axis v's extent or 1).
  Shape NarrowShape(int v) {
    if (auto it = shape_.find(v); it != shape_.end()) return it->second;
    const Shape narrow = Find(v);
    shape_[v] = narrow;
    return narrow;
  }

  /// The new graph's value holding `v`'s narrow form, its nodes added on first use (the values
  /// it reads already copied).
  absl::StatusOr<int> Emit(int v) {
    if (auto it = emitted_.find(v); it != emitted_.end()) return it->second;
    const Value& value = graph_.values()[v];
    const Shape narrow = NarrowShape(v);
    if (narrow == value.desc.shape) return rw_.Map(v);
    const Node& node = graph_.nodes()[value.producer];
    absl::StatusOr<std::vector<int>> made;
    if (node.op == "broadcast_to") {
      auto in = Emit(node.inputs[0]);
      if (!in.ok()) return in.status();
      if (rw_.new_graph().values()[*in].desc.shape.size() == narrow.size()) {
        return emitted_[v] = *in;
      }
      std::vector<int64_t> dims;
      for (const Dim& d : narrow) dims.push_back(d.value);  // all known (Find)
      made = rw_.AddNode("reshape", {*in}, {{"shape", dims}}, value.name + "_narrow");
    } else if (IsUniform(node)) {
      made = rw_.AddNode("fill", {}, UniformFill(node, narrow.size(), value.desc.dtype),
                         value.name + "_narrow");
    } else {
      std::vector<int> inputs;
      for (int u : node.inputs) {
        auto in = Emit(u);
        if (!in.ok()) return in.status();
        inputs.push_back(*in);
      }
      made = rw_.AddNode(node.op, inputs, node.attrs, value.name + "_narrow");
    }
    if (!made.ok()) return made.status();
    const TensorDesc& got = rw_.new_graph().values()[made->front()].desc;
    if (!(got.shape == narrow) || got.dtype != value.desc.dtype) {
      return absl::InternalError(absl::StrCat("narrowing attention mask value ", value.name, " (",
                                              value.desc.ToString(), ") made ", got.ToString(),
                                              ", not ", ShapeToString(narrow)));
    }
    return emitted_[v] = made->front();
  }

 private:
  Shape Find(int v) {
    const Value& value = graph_.values()[v];
    const Shape& shape = value.desc.shape;
    if (value.producer < 0) return shape;
    const Node& node = graph_.nodes()[value.producer];
    if (node.op == "broadcast_to") {
      const Shape in = NarrowShape(node.inputs[0]);
      const Shape narrow = LeftPadded(in, shape.size());
      // A reshape adds the leading axes, which must be known.
      const bool reshapes = in.size() != shape.size();
      if (reshapes &&
          std::any_of(narrow.begin(), narrow.end(), [](const Dim& d) { return d.is_symbolic(); })) {
        return shape;
      }
      return narrow;
    }
    if (IsUniform(node)) return Shape(shape.size(), Dim::Known(1));
    auto def = OpRegistry::Global().Find(node.op);
    const bool elementwise = def.ok() && ((*def)->pattern == OpPattern::kElementwise ||
                                          (*def)->pattern == OpPattern::kBroadcast);
    if (!elementwise || node.outputs.size() != 1 || node.inputs.empty()) {
      return shape;
    }
    // Only ops whose output is the broadcast of their inputs (not a random op's shape attribute).
    std::vector<Shape> full, narrow;
    for (int u : node.inputs) {
      full.push_back(graph_.values()[u].desc.shape);
      narrow.push_back(NarrowShape(u));
    }
    const std::optional<Shape> made = Broadcast(full);
    if (!made || !(*made == shape)) return shape;
    const std::optional<Shape> narrowed = Broadcast(narrow);
    return narrowed && narrowed->size() == shape.size() ? *narrowed : shape;
  }

  const Graph& graph_;
  GraphRewriter& rw_;
  std::map<int, Shape> shape_;
  std::map<int, int> emitted_;
};

}  // namespace

absl::StatusOr<Graph> NarrowAttentionMasks(const Graph& graph) {
  GraphRewriter rw(graph);
  Narrower narrower(graph, rw);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    const int slot = ops::AttentionMaskInput(node.op, node.attrs, node.inputs.size());
    const int mask = slot >= 0 ? node.inputs[slot] : -1;
    if (mask < 0 || narrower.NarrowShape(mask) == graph.values()[mask].desc.shape) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    // A narrowed node whose inferred shape is not the one expected (an op tagged broadcast
    // that is not numpy's rule) leaves the mask as it is: the nodes added stay unread.
    auto narrow = narrower.Emit(mask);
    if (!narrow.ok()) {
      VLOG(1) << "attention mask " << graph.values()[mask].name
              << " kept whole: " << narrow.status();
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    std::vector<int> inputs;
    for (int u : node.inputs) inputs.push_back(rw.Map(u));
    inputs[slot] = *narrow;
    std::vector<std::string> names;
    for (int v : node.outputs) names.push_back(graph.values()[v].name);
    auto made = rw.AddNode(node.op, inputs, node.attrs, node.op, names);
    if (!made.ok()) return made.status();
    for (size_t i = 0; i < made->size(); ++i) rw.SetMap(node.outputs[i], (*made)[i]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
