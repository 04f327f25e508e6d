/// \file A planted miscompile for testing the accuracy self-checks (the flag
/// cinn_like_debug_wrong_op): compiled code negates the results of the named ops. Unlike
/// cinn_like_debug_fail_op, which makes compilation fail, this compiles and runs and is silently
/// wrong, which is the failure the self-checks exist to catch and name.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "frontend/program.h"
#include "hlir/graph.h"

namespace cinn_like {

/// The graph to compile instead of `program` (whose graph is `graph`): after each instruction
/// whose op is one of `ops` (comma-separated), each of its results is replaced by its negation
/// (`neg`; bool results by `logical_not`), under the result's own name, so every later
/// instruction and output reads the wrong value. Non-zero elements are then wrong, bool ones
/// all are.
absl::StatusOr<hlir::Graph> PlantWrongResults(const frontend::Program& program,
                                              const hlir::Graph& graph, const std::string& ops);

}  // namespace cinn_like
