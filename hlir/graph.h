/// \file Graph: the graph level's view of a subgraph: values (named tensors with dtype and
/// shape) and op nodes in topological order. Nodes are added only after their op's inference
/// accepted the inputs, so a Graph is always well typed. It is append-only: graph passes build a
/// new Graph from an old one with hlir/pass/graph_rewriter.h.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/attribute.h"
#include "hlir/shape.h"

namespace cinn_like::hlir {

struct Value {
  std::string name;
  TensorDesc desc;
  int producer = -1;  // the node that computes it; -1 for a graph input
};

struct Node {
  std::string op;
  std::vector<int> inputs;   // value ids
  std::vector<int> outputs;  // value ids
  AttributeMap attrs;
};

class Graph {
 public:
  /// A new graph input; the name must be new.
  absl::StatusOr<int> AddInput(const std::string& name, const TensorDesc& desc);
  /// Appends a node after checking the op exists and accepts the inputs (OpRegistry::Infer);
  /// its outputs are new values named `output_names` (as many as the op has outputs), or,
  /// when that is empty, fresh names "<op>_<k>".
  absl::StatusOr<std::vector<int>> AddNode(const std::string& op, const std::vector<int>& inputs,
                                           const AttributeMap& attrs,
                                           const std::vector<std::string>& output_names);
  /// Marks a value as a graph output (in call order); marking one twice is an error.
  absl::Status MarkOutput(int value);

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  /// The id of the value called `name`, or NotFound.
  absl::StatusOr<int> Find(const std::string& name) const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<int> inputs_, outputs_;
  std::map<std::string, int> by_name_;
  int fresh_counter_ = 0;
};

}  // namespace cinn_like::hlir
