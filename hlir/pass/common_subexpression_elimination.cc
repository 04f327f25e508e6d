/// \file Common-subexpression elimination: one table from (op, new inputs, attributes, compared
/// bit for bit) to the first node that computed it, in node order.
#include "hlir/pass/common_subexpression_elimination.h"

#include <cstring>
#include <map>
#include <tuple>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

void AppendExact(std::string& key, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  absl::StrAppend(&key, "d", bits, ";");
}
template <typename T>
void AppendExact(std::string& key, const T& v) {
  if constexpr (std::is_same_v<T, std::vector<double>>) {
    for (double d : v) AppendExact(key, d);
  } else {
    absl::StrAppend(&key, AttributeToString(Attribute(v)), ";");
  }
}

/// The attributes as exact text: reals by their bits, so that NaN, 0 and -0 are three values
/// (the attribute map's own < on doubles made a NaN fill equal to a 0 fill).
std::string ExactAttributes(const AttributeMap& attrs) {
  std::string key;
  for (const auto& [name, value] : attrs) {
    absl::StrAppend(&key, name, "=", value.index(), ":");
    std::visit([&](const auto& v) { AppendExact(key, v); }, value);
  }
  return key;
}

}  // namespace

absl::StatusOr<Graph> EliminateCommonSubexpressions(const Graph& graph) {
  using Key = std::tuple<std::string, std::vector<int>, std::string>;
  std::map<Key, int> seen;  // key -> old node whose outputs are kept
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    std::vector<int> inputs;
    for (int v : node.inputs) inputs.push_back(rw.Map(v));
    Key key{node.op, inputs, ExactAttributes(node.attrs)};
    bool is_output = false;
    for (int v : node.outputs) is_output = is_output || IsGraphOutput(graph, v);
    auto it = seen.find(key);
    if (it != seen.end() && !is_output) {
      const Node& first = graph.nodes()[it->second];
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        rw.SetMap(node.outputs[i], rw.Map(first.outputs[i]));
      }
      continue;
    }
    absl::Status s = rw.CopyNode(n);
    if (!s.ok()) return s;
    if (it == seen.end()) seen.emplace(std::move(key), n);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
