/// \file Program: what a framework hands cinn_like: named inputs with dtype and shape
/// (symbolic dims allowed), a list of op instructions over named variables, and the outputs in
/// call order. Its JSON form (frontend/program_json.h) is what the C API takes and the dump
/// writes. BuildGraph turns it into the graph level's hlir::Graph, checking every op.
#pragma once

#include <climits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/attribute.h"
#include "hlir/graph.h"
#include "hlir/shape.h"

namespace cinn_like::frontend {

struct InputDecl {
  std::string name;
  hlir::TensorDesc desc;
};

struct Instruction {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  hlir::AttributeMap attrs;
};

/// The values a call may give a symbolic size (JSON: "symbols": {"s0": {"min": 2}}); a
/// framework's guards (Dynamo's s0 >= 2) as facts the compiled entry checks.
struct SymbolRange {
  int64_t min = 0;
  int64_t max = INT32_MAX;
};

struct Program {
  std::vector<InputDecl> inputs;
  std::vector<Instruction> instructions;
  std::vector<std::string> outputs;
  std::map<std::string, SymbolRange> symbols;  // symbols without an entry: [0, INT32_MAX]
};

/// The symbols a call binds: those some input has as a dim by itself.
std::set<std::string> BoundSymbols(const Program& program);

/// What is wrong with the bounds `range` of the symbol `name` ("" when nothing): a symbol of
/// `bound` (BoundSymbols), within [0, INT32_MAX] (symbolic sizes are 32-bit), min <= max. The
/// JSON reader and BuildGraph ask it, so a Program built in C++ prints as JSON that reads back.
std::string SymbolRangeProblem(const std::set<std::string>& bound, const std::string& name,
                               const SymbolRange& range);

/// The graph of a program: each instruction's op must exist and accept its inputs (the error
/// names the instruction index, the op and the cause), names must be defined before use and
/// defined once, and the outputs must name defined variables.
absl::StatusOr<hlir::Graph> BuildGraph(const Program& program);

}  // namespace cinn_like::frontend
