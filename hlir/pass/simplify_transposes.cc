/// \file Transpose simplification, through the graph rewriter.
#include "hlir/pass/simplify_transposes.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hlir/attribute.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

/// The perm of transpose `node` with negative axes made positive; empty when malformed
/// (inference would have refused it: left alone).
std::vector<int64_t> Perm(const Node& node, size_t rank) {
  auto perm = GetInts(node.attrs, "perm", "transpose");
  if (!perm.ok() || perm->size() != rank) return {};
  std::vector<int64_t> p = *perm;
  for (int64_t& a : p) a = a < 0 ? a + static_cast<int64_t>(rank) : a;
  return p;
}

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

/// The graph outputs that are an identity transpose (composed through a chain) of a value a
/// node computes, by that value: the value is then the output, under the output's name (a weight
/// gradient `transpose(transpose(mm))` would otherwise be copied by a kernel of its own). Not a
/// graph input (an output is never an input passed through), nor a value that is an output
/// itself or stands for another one (two outputs are two buffers).
std::map<int, int> OutputsThatAreTheirSource(const Graph& graph) {
  std::map<int, std::pair<int, std::vector<int64_t>>> chain;  // value -> (source, perm)
  std::map<int, int> standing;
  std::set<int> taken;
  for (const Node& node : graph.nodes()) {
    if (node.op != "transpose") continue;
    const int out = node.outputs[0];
    std::vector<int64_t> perm = Perm(node, graph.values()[out].desc.shape.size());
    if (perm.empty()) continue;
    int source = node.inputs[0];
    auto first = chain.find(source);
    if (first != chain.end()) {
      for (int64_t& a : perm) a = first->second.second[a];
      source = first->second.first;
    }
    chain[out] = {source, perm};
    if (IsIdentity(perm) && IsGraphOutput(graph, out) && graph.values()[source].producer >= 0 &&
        !IsGraphOutput(graph, source) && taken.insert(source).second) {
      standing[source] = out;
    }
  }
  return standing;
}

}  // namespace

absl::StatusOr<Graph> SimplifyTransposes(const Graph& graph) {
  const std::map<int, int> standing = OutputsThatAreTheirSource(graph);
  std::set<int> stood;  // the outputs a source stands for
  for (const auto& [source, out] : standing) stood.insert(out);
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    const int out = node.outputs.empty() ? -1 : node.outputs[0];
    const size_t rank = out < 0 ? 0 : graph.values()[out].desc.shape.size();
    std::vector<int64_t> perm = node.op == "transpose" ? Perm(node, rank) : std::vector<int64_t>{};
    if (perm.empty()) {
      // A value that stands for an output takes the output's name.
      std::vector<std::string> names;
      bool renamed = false;
      for (int v : node.outputs) {
        auto it = standing.find(v);
        renamed = renamed || it != standing.end();
        names.push_back(graph.values()[it != standing.end() ? it->second : v].name);
      }
      if (!renamed) {
        absl::Status s = rw.CopyNode(n);
        if (!s.ok()) return s;
        continue;
      }
      std::vector<int> inputs;
      for (int v : node.inputs) inputs.push_back(rw.Map(v));
      auto made = rw.AddNode(node.op, inputs, node.attrs, node.op, names);
      if (!made.ok()) return made.status();
      for (size_t i = 0; i < made->size(); ++i) rw.SetMap(node.outputs[i], (*made)[i]);
      continue;
    }
    // y = transpose(x, p1), z = transpose(y, p2): z's axis i is x's axis p1[p2[i]].
    int source = rw.Map(node.inputs[0]);
    const int producer = rw.new_graph().values()[source].producer;
    if (producer >= 0 && rw.new_graph().nodes()[producer].op == "transpose") {
      const Node& first = rw.new_graph().nodes()[producer];
      std::vector<int64_t> p1 = Perm(first, rank);
      if (!p1.empty()) {
        for (int64_t& a : perm) a = p1[a];
        source = first.inputs[0];
      }
    }
    if (IsIdentity(perm) && (!IsGraphOutput(graph, out) || stood.count(out))) {
      rw.SetMap(out, source);
    } else if (source != rw.Map(node.inputs[0])) {
      const std::string& name = graph.values()[out].name;
      AttributeMap attrs = node.attrs;
      attrs["perm"] = perm;
      auto made = rw.AddNode("transpose", {source}, attrs, name, {name});
      if (!made.ok()) return made.status();
      rw.SetMap(out, (*made)[0]);
    } else {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
    }
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
