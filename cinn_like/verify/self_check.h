/// \file The accuracy self-check (CINN's FLAGS_cinn_self_check_accuracy, offline): a Program
/// compiled for x86, run on fresh random inputs and compared with the reference interpreter; a
/// mismatch (or a failed compile or call) is narrowed to the first instruction whose result
/// differs, as the smallest failing prefix of the Program, which is what a bug report needs.
/// tools/cinn_replay is its command line. The narrowing (cinn_like/verify/first_difference.h) is
/// shared with the call-time check (cinn_like/verify/call_check.h), which runs it on a call's
/// real inputs.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cinn_like/compare/random_inputs.h"
#include "frontend/program.h"

namespace cinn_like {

/// The random inputs' options, and whether a failure is narrowed.
struct SelfCheckOptions : RandomInputOptions {
  bool bisect = true;  // narrow a failure to its first instruction
};

struct SelfCheckReport {
  bool ok = true;
  std::string summary;             // what ran and, on failure, the first differences
  int first_bad_instruction = -1;  // index into the Program's instructions, when found
  frontend::Program smallest;      // the failing prefix (outputs: that instruction's)
};

/// Checks `program` as described above. An error status means the check itself could not run
/// (the Program is invalid, or the reference refuses the random inputs: an index out of range,
/// say; SelfCheckOptions' ranges can make them valid).
absl::StatusOr<SelfCheckReport> SelfCheck(const frontend::Program& program,
                                          const SelfCheckOptions& options);

}  // namespace cinn_like
