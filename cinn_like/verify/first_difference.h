/// \file A Program compiled and run against the reference's outputs, and the narrowing of a
/// difference to its first instruction: what both self-checks (cinn_like/verify/self_check.h,
/// cinn_like/verify/call_check.h) run. It compiles through the pipeline
/// (cinn_like/pipeline/lower_and_build.h), as CompileProgram does, but never through the
/// persistent cache: a check runs code compiled now.
#pragma once

#include <string>
#include <vector>

#include "frontend/program.h"
#include "hlir/host_tensor.h"
#include "ir/target.h"

namespace cinn_like {

/// Compiles `program` for `target` (entry "self_check"), calls it on `stream` with copies of
/// `inputs` on the target's device, and compares its outputs with `want` (CallAndCompare,
/// cinn_like/compare/call_and_compare.h). Returns "" when all match, else what differs; a failed
/// compile or call is a difference that names its cause.
std::string RunAndCompare(const frontend::Program& program, const ir::Target& target,
                          const std::vector<hlir::HostTensor>& inputs,
                          const std::vector<hlir::HostTensor>& want, void* stream);

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
