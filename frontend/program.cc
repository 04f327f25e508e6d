/// \file Program to Graph.
#include "frontend/program.h"

#include <climits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace cinn_like::frontend {
namespace {

/// The first symbol of `shape` not in `bound`, or "".
std::string Unbound(const hlir::Shape& shape, const std::set<std::string>& bound) {
  for (const hlir::Dim& d : shape) {
    for (const std::string& s : d.expr().Symbols()) {
      if (!bound.count(s)) return s;
    }
  }
  return "";
}

/// A symbolic dim of `shape` with a coefficient past int32 (symbolic sizes are lowered with
/// 32-bit indices), or nullptr.
const hlir::Dim* WideCoefficient(const hlir::Shape& shape) {
  for (const hlir::Dim& d : shape) {
    if (!d.is_symbolic()) continue;
    const hlir::SymExpr e = d.expr();  // terms() refers into it
    for (const auto& [monomial, c] : e.terms()) {
      if (c > INT32_MAX || c < INT32_MIN) return &d;
    }
  }
  return nullptr;
}

/// The symbols a call binds: those some input of `graph` has as a dim by itself.
std::set<std::string> BoundSymbols(const hlir::Graph& graph) {
  std::set<std::string> bound;
  for (int v : graph.inputs()) {
    for (const hlir::Dim& d : graph.values()[v].desc.shape) {
      if (auto name = d.symbol_name()) bound.insert(*name);
    }
  }
  return bound;
}

/// A compiled function learns its symbols' values from its inputs' dims: each symbol must be a
/// dim of some input by itself (an input [s0*s1] alone cannot give s0 and s1); the Program's
/// bounds (`symbols`) are of such symbols and in order, as its JSON form requires
/// (program_json.cc), so that a Program built in C++ prints as JSON that reads back.
absl::Status CheckSymbolsBound(const hlir::Graph& graph,
                               const std::map<std::string, SymbolRange>& ranges) {
  const std::set<std::string> bound = BoundSymbols(graph);
  for (const auto& [name, range] : ranges) {
    if (!bound.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the program's bounds name the symbol ", name,
                       ", which no input has as a dim by itself: a call could not bind it"));
    }
    if (range.min < 0 || range.max > INT32_MAX || range.min > range.max) {
      return absl::InvalidArgumentError(
          absl::StrCat("the program's bounds of the symbol ", name, ", [", range.min, ", ",
                       range.max, "], are not within [0, ", INT32_MAX, "] in order"));
    }
  }
  auto error = [](const std::string& what, const std::string& symbol) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " uses the symbol ", symbol,
                     ", which no input has as a dim by itself: a call could not bind it"));
  };
  for (const hlir::Value& v : graph.values()) {
    std::string s = Unbound(v.desc.shape, bound);
    if (!s.empty()) return error(absl::StrCat("tensor ", v.name, " ", v.desc.ToString()), s);
    if (const hlir::Dim* d = WideCoefficient(v.desc.shape)) {
      return absl::OutOfRangeError(absl::StrCat("tensor ", v.name, " ", v.desc.ToString(),
                                                ": the symbolic size ", d->symbol,
                                                " has a coefficient past int32, the index type "
                                                "of symbolic shapes"));
    }
  }
  for (const hlir::Node& n : graph.nodes()) {
    for (const auto& [name, value] : n.attrs) {
      const hlir::Shape* shape = std::get_if<hlir::Shape>(&value);
      std::string s = shape ? Unbound(*shape, bound) : "";
      if (!s.empty()) {
        return error(
            absl::StrCat("op ", n.op, ": attribute '", name, "' ", hlir::ShapeToString(*shape)), s);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<hlir::Graph> BuildGraph(const Program& program) {
  hlir::Graph graph;
  for (const InputDecl& in : program.inputs) {
    auto id = graph.AddInput(in.name, in.desc);
    if (!id.ok()) return id.status();
  }
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const Instruction& inst = program.instructions[i];
    std::vector<int> inputs;
    for (const std::string& name : inst.inputs) {
      auto id = graph.Find(name);
      if (!id.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "instruction ", i, " (", inst.op, "): input '", name, "' is not defined before it"));
      }
      inputs.push_back(*id);
    }
    auto outs = graph.AddNode(inst.op, inputs, inst.attrs, inst.outputs);
    if (!outs.ok()) {
      return absl::Status(outs.status().code(),
                          absl::StrCat("instruction ", i, ": ", outs.status().message()));
    }
  }
  for (const std::string& name : program.outputs) {
    auto id = graph.Find(name);
    if (!id.ok()) return absl::InvalidArgumentError("output '" + name + "' is not defined");
    absl::Status s = graph.MarkOutput(*id);
    if (!s.ok()) return s;
  }
  if (program.outputs.empty()) return absl::InvalidArgumentError("the program has no outputs");
  absl::Status bound = CheckSymbolsBound(graph, program.symbols);
  if (!bound.ok()) return bound;
  return graph;
}

}  // namespace cinn_like::frontend
