/// \file StepTimer: the wall time of each step of a Compiler::Build, into CompileTimes, so that
/// Build reads as its list of steps.
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "backends/compiler.h"

namespace cinn_like::backends {

class StepTimer {
 public:
  /// Starts the clock of the whole build; `times` is reset.
  explicit StepTimer(CompileTimes* times) : times_(times), start_(Clock::now()) {
    *times_ = CompileTimes();
  }

  /// Runs `step`, adds its wall time to `field` of the times and returns what the step returns:
  /// `auto ptx = steps.Run(&CompileTimes::nvrtc_ms, [&] { return nvrtc.Compile(...); });`
  template <typename Step>
  auto Run(double CompileTimes::*field, Step&& step) {
    auto begin = Clock::now();
    auto result = std::forward<Step>(step)();
    times_->*field += MillisecondsSince(begin);
    return result;
  }

  /// Sets the total; with the dump flag on, writes the breakdown to
  /// <dump>/<module>.compile_times.txt.
  void Finish(const std::string& module);

 private:
  using Clock = std::chrono::steady_clock;
  static double MillisecondsSince(Clock::time_point begin) {
    return std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  }

  CompileTimes* times_;
  Clock::time_point start_;
};

}  // namespace cinn_like::backends
