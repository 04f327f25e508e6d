/// \file The versioned JSON form of a Program. It round-trips exactly: attributes carry their
/// kind ({"int": 3}, {"float": 0.5}, {"ints": [..]}, {"floats": [..]}, {"bool": true},
/// {"string": ".."}; non-finite floats as "inf", "-inf", "nan"), dims are numbers or symbol
/// names, and doubles print with round-trip precision.
///
///   {"format": "cinn_like.program", "version": 1,
///    "inputs": [{"name": "x", "dtype": "float32", "shape": ["n", 64]}],
///    "instructions": [{"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {}}],
///    "outputs": ["y"]}
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "frontend/program.h"

namespace cinn_like::frontend {

inline constexpr int kProgramJsonVersion = 1;

/// The JSON text of `program` (indented by 1 for readable dumps).
std::string ProgramToJson(const Program& program);
/// Parses the JSON form; errors name the JSON path at fault ("$.instructions[2].attrs.axis")
/// and what was found there, never the JSON library's own text.
/// A newer version than kProgramJsonVersion is refused with both versions named.
absl::StatusOr<Program> ProgramFromJson(const std::string& text);

}  // namespace cinn_like::frontend
