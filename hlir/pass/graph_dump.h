/// \file Readable forms of a graph for the dump directory: text, one line per node, and the
/// fusion groups as Graphviz.
#pragma once

#include <string>
#include <vector>

#include "hlir/graph.h"
#include "hlir/pass/fusion.h"

namespace cinn_like::hlir {

/// One line per input, node and output, e.g.
///   input x: float32[4, 8]
///   y: float32[4, 8] = gelu(x) {approximate="none"}
///   output y
/// Long list attributes (a constant's values) show their first 8 entries and their count.
std::string GraphToText(const Graph& graph);

/// The graph as a Graphviz digraph with one cluster per fusion group (labelled with its index,
/// pattern and master); values are edges labelled by name, graph inputs are boxes.
std::string FusionGroupsToDot(const Graph& graph, const std::vector<FusionGroup>& groups);

}  // namespace cinn_like::hlir
