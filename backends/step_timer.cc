/// \file StepTimer::Finish: the total and the compile-time breakdown dump.
#include "backends/step_timer.h"

#include "ir/flags.h"

namespace cinn_like::backends {

void StepTimer::Finish(const std::string& module) {
  times_->total_ms = MillisecondsSince(start_);
  if (!DumpDir().empty()) DumpToFile(module + ".compile_times.txt", times_->ToString());
}

}  // namespace cinn_like::backends
