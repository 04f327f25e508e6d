/// \file The call-time accuracy self-check (the flag cinn_like_self_check, CINN's
/// FLAGS_cinn_self_check_accuracy): a function compiled with the flag on, called through
/// cinn_like_call with the flag on, is followed by the reference interpreter on the call's own
/// inputs; an output that differs beyond its dtype's tolerance fails the call with a message
/// naming the function, the output, the element, the first differing instruction (found by
/// compiling prefixes of the Program and running them on the same inputs) and its fusion group.
///
/// Compiled functions are bare C function pointers, so each one's check context is found in a
/// registry keyed by the pointer: cinn_like_module_lookup fills it, cinn_like_module_free
/// empties it. A host that calls the pointer directly skips the check.
#pragma once

#include <dlpack/dlpack.h>

#include <map>
#include <memory>
#include <string>

#include "backends/compiler.h"
#include "frontend/program.h"
#include "hlir/graph.h"
#include "hlir/pass/fusion.h"
#include "ir/target.h"

namespace cinn_like {

/// What checking the calls of one compiled function needs, kept by its CompiledProgram.
struct CallCheckContext {
  std::string function;       // the entry's name, for messages
  frontend::Program program;  // as the host gave it (without planted wrong results)
  hlir::Graph graph;          // its graph, which the reference interpreter runs
  ir::Target target;
  /// For each variable an instruction defines, the fusion group that computes it, as
  /// "fusion group 1 of 3 (elementwise: add, exp, tanh)"; absent when the graph passes
  /// removed or merged it (constant folding, common-subexpression elimination).
  std::map<std::string, std::string> group_of_value;
};

/// The context of `program` (whose graph is `graph`), compiled for `target` as `function`
/// through the fusion groups of `fused`.
std::shared_ptr<const CallCheckContext> MakeCallCheckContext(const frontend::Program& program,
                                                             const hlir::Graph& graph,
                                                             const ir::Target& target,
                                                             const std::string& function,
                                                             const hlir::FusedGraph& fused);

/// Makes calls of `fn` through CallWithSelfCheck checked against `context` (replacing what
/// `fn` had: a freed module's code address may be reused).
void RegisterCallCheck(backends::EntryFunction fn, std::shared_ptr<const CallCheckContext> context);
/// Forgets every function registered with `context` (its module is being freed).
void UnregisterCallChecks(const CallCheckContext* context);

/// Calls `fn(args, num_args, stream)`. When the flag cinn_like_self_check is on and `fn` is
/// registered, the inputs are copied to the host first (an output may share an input's
/// memory), and after a successful call the outputs are compared with the reference. Returns
/// `fn`'s result when it fails or the check passes; otherwise -1 with the last error set to
/// the mismatch (see the file comment) or, when the check itself cannot run (the reference
/// refuses the inputs, a tensor cannot be read), to why, naming the function: the outputs are
/// then written but unverified, and a check the user asked for is never silently skipped.
int CallWithSelfCheck(backends::EntryFunction fn, DLTensor** args, int32_t num_args, void* stream);

}  // namespace cinn_like
