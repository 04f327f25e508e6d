/// \file The reference interpreter: bind inputs, then infer-allocate-compute-round per node.
#include "hlir/reference_interpreter.h"

#include <exception>
#include <map>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"

namespace cinn_like::hlir {
namespace {

/// Checks an input tensor's dtype, rank and static dims against its declared desc and binds the
/// dims that are one symbol (`expressions`: false); with `expressions` true, checks the dims
/// that are polynomials of bound symbols.
absl::Status Bind(const Value& v, const HostTensor& t, std::map<std::string, int64_t>& symbols,
                  bool expressions) {
  if (t.dtype != v.desc.dtype || t.rank() != static_cast<int>(v.desc.shape.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", v.name, " is ", t.Describe(), ", expected ", v.desc.ToString()));
  }
  for (int d = 0; d < t.rank(); ++d) {
    const Dim& dim = v.desc.shape[d];
    if (!dim.is_symbolic()) {
      if (dim.value != t.shape[d]) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", v.name, " is ", t.Describe(), ", expected ", v.desc.ToString()));
      }
      continue;
    }
    const bool plain = dim.symbol_name().has_value();
    if (plain == expressions) continue;
    if (!plain) {
      auto want = dim.expr().Evaluate(symbols);
      if (!want.ok()) return want.status();
      if (*want != t.shape[d]) {
        return absl::InvalidArgumentError(absl::StrCat("input ", v.name, " is ", t.Describe(),
                                                       ": dim ", d, " is ", t.shape[d], ", but ",
                                                       dim.symbol, " = ", *want));
      }
      continue;
    }
    auto [it, fresh] = symbols.emplace(dim.symbol, t.shape[d]);
    if (!fresh && it->second != t.shape[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", v.name, " is ", t.Describe(), ": dim ", d, " (", dim.symbol, ") is ",
          t.shape[d], " but another input bound ", dim.symbol, " to ", it->second));
    }
  }
  return absl::OkStatus();
}

/// The op's reference on `in`. The reference runs in the host process (self-check, replay):
/// an exception from a library routine inside it (libstdc++'s special functions throw where
/// their series stop converging) becomes an error that names the op.
absl::Status RunOpReference(const OpDef& def, const std::vector<const HostTensor*>& in,
                            const AttributeMap& attrs, std::vector<HostTensor>& outs) {
  try {
    return def.reference(in, attrs, outs);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("the reference of op '", def.name, "' failed: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<std::vector<HostTensor>> RunReference(const Graph& graph,
                                                     const std::vector<HostTensor>& inputs) {
  if (inputs.size() != graph.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph takes ", graph.inputs().size(), " inputs, got ", inputs.size()));
  }
  std::vector<HostTensor> values(graph.values().size());
  std::map<std::string, int64_t> symbols;
  for (bool expressions : {false, true}) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      absl::Status s = Bind(graph.values()[graph.inputs()[i]], inputs[i], symbols, expressions);
      if (!s.ok()) return s;
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    HostTensor& bound = values[graph.inputs()[i]] = inputs[i];
    for (double& x : bound.data) x = RoundToDType(x, bound.dtype);  // as the dtype stores it
  }
  const OpRegistry& registry = OpRegistry::Global();
  for (const Node& node : graph.nodes()) {
    std::vector<TensorDesc> descs;
    std::vector<const HostTensor*> in;
    for (int v : node.inputs) {
      descs.push_back(TensorDesc{values[v].dtype, MakeShape(values[v].shape)});
      in.push_back(&values[v]);
    }
    // Inference again on the concrete shapes (and shape attributes with their symbols bound)
    // gives the concrete output shapes.
    auto attrs = BindShapeAttributes(node.attrs, symbols, node.op);
    if (!attrs.ok()) return attrs.status();
    auto out_descs = registry.Infer(node.op, descs, *attrs);
    if (!out_descs.ok()) return out_descs.status();
    const OpDef& def = **registry.Find(node.op);
    // A symbolic axis an op needs non-empty, bound to 0: refused as the compiled entry refuses
    // it (OpDef::needs_nonempty_axes), also where the result is empty.
    if (def.needs_nonempty_axes && def.reduce_axes) {
      const TensorDesc& declared = graph.values()[node.inputs[0]].desc;
      auto axes = def.reduce_axes(descs, *attrs);
      if (!axes.ok()) return axes.status();
      for (int a : *axes) {
        auto symbol = declared.shape[a].symbol_name();
        if (symbol && values[node.inputs[0]].shape[a] == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("op ", node.op, ": axis ", a, " of ",
                           graph.values()[node.inputs[0]].name, " (", declared.ToString(),
                           ") is empty (", *symbol, " = 0): over no elements it has no value"));
        }
      }
    }
    std::vector<HostTensor> outs;
    for (auto& d : *out_descs) outs.emplace_back(d.dtype, StaticDims(d.shape));
    absl::Status s = RunOpReference(def, in, *attrs, outs);
    if (!s.ok()) return s;
    for (size_t i = 0; i < outs.size(); ++i) {
      for (double& x : outs[i].data) x = RoundToDType(x, outs[i].dtype);
      values[node.outputs[i]] = std::move(outs[i]);
    }
  }
  std::vector<HostTensor> result;
  for (int v : graph.outputs()) result.push_back(values[v]);
  return result;
}

}  // namespace cinn_like::hlir
