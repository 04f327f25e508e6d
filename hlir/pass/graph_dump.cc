/// \file GraphToText and FusionGroupsToDot.
#include "hlir/pass/graph_dump.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cinn_like::hlir {
namespace {

std::string ShortAttribute(const Attribute& a) {
  constexpr size_t kMax = 8;
  if (auto* list = std::get_if<std::vector<double>>(&a); list && list->size() > kMax) {
    std::vector<double> head(list->begin(), list->begin() + kMax);
    return absl::StrCat("[", absl::StrJoin(head, ", "), ", ... (", list->size(), " values)]");
  }
  return AttributeToString(a);
}

std::string NodeText(const Graph& graph, const Node& node) {
  std::vector<std::string> outs, ins, attrs;
  for (int v : node.outputs) {
    outs.push_back(absl::StrCat(graph.values()[v].name, ": ", graph.values()[v].desc.ToString()));
  }
  for (int v : node.inputs) ins.push_back(graph.values()[v].name);
  for (auto& [name, value] : node.attrs)
    attrs.push_back(absl::StrCat(name, "=", ShortAttribute(value)));
  return absl::StrCat(absl::StrJoin(outs, ", "), " = ", node.op, "(", absl::StrJoin(ins, ", "), ")",
                      attrs.empty() ? "" : absl::StrCat(" {", absl::StrJoin(attrs, ", "), "}"));
}

}  // namespace

std::string GraphToText(const Graph& graph) {
  std::string text;
  for (int v : graph.inputs()) {
    absl::StrAppend(&text, "input ", graph.values()[v].name, ": ",
                    graph.values()[v].desc.ToString(), "\n");
  }
  for (const Node& node : graph.nodes()) absl::StrAppend(&text, NodeText(graph, node), "\n");
  for (int v : graph.outputs()) absl::StrAppend(&text, "output ", graph.values()[v].name, "\n");
  return text;
}

std::string FusionGroupsToDot(const Graph& graph, const std::vector<FusionGroup>& groups) {
  std::string dot = "digraph fusion {\n  node [shape=ellipse, fontname=\"monospace\"];\n";
  for (int v : graph.inputs()) {
    absl::StrAppend(&dot, "  v", v, " [shape=box, label=\"", graph.values()[v].name, "\\n",
                    graph.values()[v].desc.ToString(), "\"];\n");
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const FusionGroup& group = groups[g];
    absl::StrAppend(&dot, "  subgraph cluster_", g, " {\n    label=\"group ", g, " (",
                    OpPatternName(group.pattern), ", master ", graph.nodes()[group.master].op,
                    ")\";\n");
    for (int n : group.nodes) {
      absl::StrAppend(&dot, "    n", n, " [label=\"", graph.nodes()[n].op, "\"",
                      n == group.master ? ", style=bold" : "", "];\n");
    }
    absl::StrAppend(&dot, "  }\n");
  }
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    for (int v : graph.nodes()[n].inputs) {
      int p = graph.values()[v].producer;
      absl::StrAppend(&dot, "  ", p < 0 ? absl::StrCat("v", v) : absl::StrCat("n", p), " -> n", n,
                      " [label=\"", graph.values()[v].name, "\"];\n");
    }
  }
  for (int v : graph.outputs()) {
    int p = graph.values()[v].producer;
    absl::StrAppend(&dot, "  out", v, " [shape=box, label=\"output ", graph.values()[v].name,
                    "\"];\n  ", p < 0 ? absl::StrCat("v", v) : absl::StrCat("n", p), " -> out", v,
                    ";\n");
  }
  absl::StrAppend(&dot, "}\n");
  return dot;
}

}  // namespace cinn_like::hlir
