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

/// A compiled function learns its symbols' values from its inputs' dims: each symbol must be a
/// dim of some input by itself (an input [s0*s1] alone cannot give s0 and s1), the Program's
/// bounds (`symbols`) too (SymbolRangeProblem).
absl::Status CheckSymbolsBound(const hlir::Graph& graph, const Program& program) {
  const std::set<std::string> bound = BoundSymbols(program);
  for (const auto& [name, range] : program.symbols) {
    std::string problem = SymbolRangeProblem(bound, name, range);
    if (!problem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("the program's symbol ", name, ": ", problem));
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

std::set<std::string> BoundSymbols(const Program& program) {
  std::set<std::string> bound;
  for (const InputDecl& in : program.inputs) {
    for (const hlir::Dim& d : in.desc.shape) {
      if (auto name = d.symbol_name()) bound.insert(*name);
    }
  }
  return bound;
}

std::string SymbolRangeProblem(const std::set<std::string>& bound, const std::string& name,
                               const SymbolRange& range) {
  if (!bound.count(name)) {
    return "no input has this symbol as a dim by itself: a call could not bind it";
  }
  if (range.min < 0 || range.max > INT32_MAX || range.min > range.max) {
    return absl::StrCat("bounds [", range.min, ", ", range.max, "] are not within [0, ", INT32_MAX,
                        "] in order");
  }
  return "";
}

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
  absl::Status bound = CheckSymbolsBound(graph, program);
  if (!bound.ok()) return bound;
  return graph;
}

}  // namespace cinn_like::frontend
