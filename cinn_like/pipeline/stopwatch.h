/// \file Milliseconds of wall time, for the figures a compile records (compile_stats.h).
#pragma once

#include <chrono>

namespace cinn_like {

/// Milliseconds since it was made.
class Stopwatch {
 public:
  double Milliseconds() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace cinn_like
