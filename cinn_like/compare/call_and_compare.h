/// \file One call of a compiled function (built or loaded already) on copies of given inputs, its
/// outputs compared with the reference's: what the self-checks (cinn_like/verify/) and tests run
/// once they hold a function.
#pragma once

#include <string>
#include <vector>

#include "backends/compiler.h"
#include "hlir/host_tensor.h"
#include "ir/target.h"

namespace cinn_like {

/// Calls `fn` (a host entry compiled for `target`) on `stream` with copies of `inputs` on the
/// target's device and outputs filled with a poison value, then compares its outputs, named
/// `output_names`, with `want` (CompareOutputs, cinn_like/compare/compare_outputs.h). Returns ""
/// when all match, else what differs; a failed placement, call or read is a difference that
/// names its cause.
std::string CallAndCompare(backends::EntryFunction fn, const ir::Target& target,
                           const std::vector<hlir::HostTensor>& inputs,
                           const std::vector<hlir::HostTensor>& want,
                           const std::vector<std::string>& output_names, void* stream);

}  // namespace cinn_like
