/// \file Program: what a framework hands cinn_like: named inputs with dtype and shape
/// (symbolic dims allowed), a list of op instructions over named variables, and the outputs in
/// call order. Its JSON form (frontend/program_json.h) is what the C API takes and the dump
/// writes. BuildGraph turns it into the graph level's hlir::Graph, checking every op.
#pragma once

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

struct Program {
  std::vector<InputDecl> inputs;
  std::vector<Instruction> instructions;
  std::vector<std::string> outputs;
};

/// The graph of a program: each instruction's op must exist and accept its inputs (the error
/// names the instruction index, the op and the cause), names must be defined before use and
/// defined once, and the outputs must name defined variables.
absl::StatusOr<hlir::Graph> BuildGraph(const Program& program);

}  // namespace cinn_like::frontend
