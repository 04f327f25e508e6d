/// \file The accuracy self-check (CINN's FLAGS_cinn_self_check_accuracy, offline): a Program
/// compiled for x86, run on fresh random inputs and compared with the reference interpreter; a
/// mismatch (or a failed compile or call) is narrowed to the first instruction whose result
/// differs, as the smallest failing prefix of the Program, which is what a bug report needs.
/// tools/cinn_replay is its command line. The comparison and the narrowing are shared with the
/// call-time check (cinn_like/call_check.h), which runs them on a call's real inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/program.h"
#include "hlir/host_tensor.h"
#include "ir/target.h"

namespace cinn_like {

struct SelfCheckOptions {
  uint64_t seed = 1;
  std::map<std::string, int64_t> sizes;  // symbolic dims; others take `default_size`
  int64_t default_size = 7;
  double int_low = -5, int_high = 5;  // integer inputs (uint8: from 0); floats are in [-2, 2]
  bool bisect = true;                 // narrow a failure to its first instruction
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

// The pieces both self-checks (and the tuner, cinn_like/autotune.h) share.

/// Random values for every input of `graph`: floats uniform in [-2, 2] (rounded to their
/// dtype), integers in [int_low, int_high], bools half true; symbolic dims take o.sizes, else
/// o.default_size. The same seed gives the same tensors.
std::vector<hlir::HostTensor> RandomInputs(const hlir::Graph& graph, const SelfCheckOptions& o);

/// Relative and absolute tolerance of a dtype: a few units in the last place of its format;
/// 0 (exact) for integers and bool.
double Tolerance(hlir::DType t);

/// Compares the outputs `got` with the reference's `want` (the same dtypes and shapes), element
/// by element at Tolerance(dtype) (NaN must meet NaN, an infinity itself). Returns "" when all
/// match, else one line per differing element, at most 3 per output then a count:
///   "  output y (float32[4, 5]) element 3: got 0.5, want -0.5 (tolerance 0.0001)".
std::string CompareOutputs(const std::vector<std::string>& names,
                           const std::vector<hlir::HostTensor>& want,
                           const std::vector<hlir::HostTensor>& got);

/// Compiles `program` for `target`, calls it on `stream` with copies of `inputs` on the
/// target's device, and compares its outputs with `want` (CompareOutputs). Returns "" when all
/// match, else what differs; a failed compile or call is a difference that names its cause.
std::string RunAndCompare(const frontend::Program& program, const ir::Target& target,
                          const std::vector<hlir::HostTensor>& inputs,
                          const std::vector<hlir::HostTensor>& want, void* stream);

/// RunAndCompare's call and comparison on a Program compiled (or loaded) already: its entry
/// (compiled.name()) on copies of `inputs`, outputs named `output_names`, against `want`.
class CompiledProgram;
std::string CallAndCompare(const CompiledProgram& compiled, const ir::Target& target,
                           const std::vector<hlir::HostTensor>& inputs,
                           const std::vector<hlir::HostTensor>& want,
                           const std::vector<std::string>& output_names, void* stream);

/// The first instruction whose result, compiled alone with what precedes it, differs.
struct FirstDifference {
  int instruction = -1;      // -1: every prefix matches (only the whole Program differs)
  frontend::Program prefix;  // instructions 0..instruction; outputs: that instruction's
  std::string diffs;         // RunAndCompare's text for that prefix
};

/// Runs the prefixes of `program` (outputs: their last instruction's) on `inputs` through
/// RunAndCompare, shortest first, and returns the first that differs from the reference: that
/// instruction is at fault, or the fusion group its prefix compiles to. Prefixes the reference
/// refuses are skipped.
FirstDifference FindFirstDifference(const frontend::Program& program,
                                    const std::vector<hlir::HostTensor>& inputs,
                                    const ir::Target& target, void* stream);

}  // namespace cinn_like
