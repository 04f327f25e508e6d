/// \file The built-in example subgraphs (the seeds): each builds its scheduled function for a
/// target, describes its arguments for a problem size, and computes the reference result.
/// The stage-printing tool, the demo and the tests all use them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like::examples {

struct Example {
  std::string name;  // also the function name
  std::string description;
  /// The lowered function for the target.
  std::function<absl::StatusOr<ir::LoweredFunc>(const ir::Target&)> build;
  /// Argument shapes (inputs then outputs, float32) for problem size n.
  std::function<std::vector<std::vector<int64_t>>(int64_t n)> shapes;
  /// Fills the outputs from the inputs (float64 accumulation); args as in shapes().
  std::function<void(std::vector<std::vector<float>>& args, int64_t n)> reference;
  int num_inputs = 2;
  /// Problem sizes the example is checked at.
  std::vector<int64_t> sizes;
  /// Largest accepted ||out - ref|| / ||ref|| over the outputs.
  double tolerance = 1e-6;
};

/// myadd, sum_reduce, add2d_reorder, matmul_tiled, add_vectorized, vadd.
const std::vector<Example>& All();
/// The example called `name`, or NotFound listing the names.
absl::StatusOr<Example> Find(const std::string& name);

}  // namespace cinn_like::examples
