/// \file Runs a built-in example through a Compiler: build, look up, run on fresh random
/// data (on the device for NVGPU), compare with the example's reference.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "tools/examples.h"

namespace cinn_like::examples {

struct RunReport {
  int64_t n = 0;
  double rel_error = 0;  // ||out - ref|| / ||ref(|inputs|)|| over all outputs (RelativeError)
  bool passed = false;
  double run_ms = 0;  // median of the timed calls (synchronized)
  std::string ToString() const;
};

/// ||outputs - reference|| / ||reference run on |inputs|||, over all outputs: the error relative
/// to the magnitude of what was summed, so results that cancel to near zero are judged fairly.
/// `reference` holds every argument (the inputs as passed, then the reference results);
/// `outputs` the computed outputs only, in order.
double RelativeError(const Example& example, const std::vector<std::vector<float>>& reference,
                     const std::vector<std::vector<float>>& outputs, int64_t n);

/// Lowers `example` for the compiler's target and builds it (once per compiler and example).
absl::Status BuildExample(const Example& example, backends::Compiler& compiler);

/// Runs an example already built into `compiler` at size n; `timed_runs` extra calls are timed.
absl::StatusOr<RunReport> RunExample(const Example& example, backends::Compiler& compiler,
                                     int64_t n, int timed_runs = 0);

}  // namespace cinn_like::examples
