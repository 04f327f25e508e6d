/// \file Fresh random inputs of a Program and the reference interpreter's outputs on them, for
/// tests that compare compiled code with the reference (the tuner's, the compile cache's).
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cinn_like/compare/random_inputs.h"
#include "frontend/program.h"
#include "hlir/reference_interpreter.h"

namespace cinn_like::testing {

struct ReferenceCase {
  bool ok = false;   // false: a failure was reported (the graph or the reference refused)
  std::string seed;  // "seed <n>", for SCOPED_TRACE
  std::vector<hlir::HostTensor> inputs, want;
};

/// Inputs from a fresh seed (RandomInputOptions' ranges) and the reference's outputs.
inline ReferenceCase MakeReferenceCase(const frontend::Program& program) {
  ReferenceCase c;
  auto graph = frontend::BuildGraph(program);
  if (!graph.ok()) {
    ADD_FAILURE() << graph.status();
    return c;
  }
  RandomInputOptions random;
  random.seed = std::random_device{}();
  c.seed = "seed " + std::to_string(random.seed);
  c.inputs = RandomInputs(*graph, random);
  auto want = hlir::RunReference(*graph, c.inputs);
  if (!want.ok()) {
    ADD_FAILURE() << want.status() << " (" << c.seed << ")";
    return c;
  }
  c.want = *std::move(want);
  c.ok = true;
  return c;
}

}  // namespace cinn_like::testing
