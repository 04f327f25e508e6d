/// \file The graph-level op tests' one way to run a NetBuilder's program through the reference
/// interpreter.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "frontend/net_builder.h"
#include "hlir/reference_interpreter.h"

namespace cinn_like::hlir {

/// Runs the program's outputs (already marked) on `inputs`.
inline absl::StatusOr<std::vector<HostTensor>> RunProgram(const frontend::NetBuilder& b,
                                                          const std::vector<HostTensor>& inputs) {
  auto program = b.Build();
  if (!program.ok()) return program.status();
  auto graph = frontend::BuildGraph(*program);
  if (!graph.ok()) return graph.status();
  return RunReference(*graph, inputs);
}

}  // namespace cinn_like::hlir
