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

/// Each transpose's output composed through the chain of transposes it reads (y =
/// transpose(x, p1), z = transpose(y, p2): z's axis i is x's axis p1[p2[i]]): its first
/// non-transpose source and the composed perm. A malformed perm has no entry.
struct Composed {
  int source;
  std::vector<int64_t> perm;
};
std::map<int, Composed> ComposeChains(const Graph& graph) {
  std::map<int, Composed> chains;
  for (const Node& node : graph.nodes()) {
    if (node.op != "transpose") continue;
    const int out = node.outputs[0];
    Composed c{node.inputs[0], Perm(node, graph.values()[out].desc.shape.size())};
    if (c.perm.empty()) continue;
    auto first = chains.find(c.source);
    if (first != chains.end()) {
      for (int64_t& a : c.perm) a = first->second.perm[a];
      c.source = first->second.source;
    }
    chains.emplace(out, std::move(c));
  }
  return chains;
}

/// The graph outputs that are an identity transpose (composed) of a value a node computes, by
/// that value: the value is then the output, under the output's name (a weight gradient
/// `transpose(transpose(mm))` would otherwise be copied by a kernel of its own). Not a graph
/// input (an output is never an input passed through), nor a value that is an output itself or
/// stands for another one (two outputs are two buffers).
std::map<int, int> OutputsThatAreTheirSource(const Graph& graph,
                                             const std::map<int, Composed>& chains) {
  std::map<int, int> standing;
  for (int out : graph.outputs()) {
    auto c = chains.find(out);
    if (c == chains.end() || !IsIdentity(c->second.perm)) continue;
    const int source = c->second.source;
    if (graph.values()[source].producer >= 0 && !IsGraphOutput(graph, source)) {
      standing.emplace(source, out);  // the first output of a source only
    }
  }
  return standing;
}

}  // namespace

absl::StatusOr<Graph> SimplifyTransposes(const Graph& graph) {
  const std::map<int, Composed> chains = ComposeChains(graph);
  const std::map<int, int> standing = OutputsThatAreTheirSource(graph, chains);
  std::set<int> stood;  // the outputs a source stands for
  for (const auto& [source, out] : standing) stood.insert(out);
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    const int out = node.outputs.empty() ? -1 : node.outputs[0];
    auto chain = node.op == "transpose" ? chains.find(out) : chains.end();
    if (chain == chains.end()) {
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
    const Composed& c = chain->second;
    const int source = rw.Map(c.source);
    if (IsIdentity(c.perm) && (!IsGraphOutput(graph, out) || stood.count(out))) {
      rw.SetMap(out, source);
    } else if (c.source != node.inputs[0]) {
      const std::string& name = graph.values()[out].name;
      AttributeMap attrs = node.attrs;
      attrs["perm"] = c.perm;
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
