/// \file The compile pipeline below the API: a Program lowered for a target and built there, in
/// one function that lists every stage and decides every retry (the tuner's lowering with its
/// knob values, the lowering without a library call that a library declined). The API
/// (CompiledProgram::Compile, ProgramSource: cinn_like/compile.h) and the self-checks
/// (cinn_like/verify/) call it; none of them lowers a Program itself.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "frontend/program.h"
#include "hlir/graph.h"
#include "hlir/pass/fusion.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like {

/// How far LowerAndBuild goes.
enum class PipelineEnd {
  kLowered,  // graph passes and lowering, the tuner not asked, nothing built (ProgramSource)
  kBuilt,    // lowered (tuned with the flag cinn_like_autotune on), then built: ready to call
};

/// What LowerAndBuild made.
struct ProgramBuild {
  hlir::Graph graph;       // the Program's graph (without planted wrong results)
  hlir::FusedGraph fused;  // its graph passes' result: the fusion groups compiled
  ir::Module module;       // the lowered module, the one built
  /// Holds the built module (kBuilt); null when only lowered.
  std::unique_ptr<backends::Compiler> compiler;
  /// kBuilt: the wait for the warm-up (cinn_like/tune/warm_up.h), graph passes, lowering, tuning
  /// and the wait for the library plans made beside the Build; not a second lowering's.
  double lower_ms = 0;
  double library_check_ms = 0;  // of lower_ms: libraries loaded and asked, plans made
};

/// Lowers `program` for `target` as host entry `name` (the Program's inputs, then its
/// outputs): frontend::BuildGraph, the debug flag cinn_like_debug_wrong_op's planted wrong
/// results (debug_wrong_op.h), hlir::RunGraphPasses, hlir::CompileFusedGraph and the Program's
/// bounds of its symbols. For kBuilt, after waiting for the warm-up: the tuner
/// (cinn_like/tune/autotune.h), when its flag is on, with the fusion groups lowered again with
/// the knob values it chose; then Compiler::Build and the wait for the library plans the
/// lowering queued; where a library declined a call, the Program is lowered and built once more
/// by a fresh compiler, the call then the generated code's. No plan queued is left being made
/// when it returns.
///
/// `compiler`, for kBuilt: the compiler to build with, made by the caller for `target` (whose
/// resolved arch a cache key read); null: one is made here; an error (the caller's
/// Compiler::Create failed): the Program is lowered as for kLowered, so that its own errors come
/// first, and that error is returned. Ignored for kLowered.
///
/// `group_report`: a built compile also writes the group report (cinn_like/tune/group_report.h)
/// while dumping is on; the compile a caller asked for sets it, not the compiles made to check
/// one (cinn_like/verify/), which would time every group of every prefix they build.
///
/// Reads the code-changing flags from the installed options snapshot, installing one for its
/// own duration where none is (options_of_this_compile.h). Errors name the op, tensor and
/// shapes at fault.
absl::StatusOr<ProgramBuild> LowerAndBuild(
    const frontend::Program& program, const ir::Target& target, const std::string& name,
    PipelineEnd end, absl::StatusOr<std::unique_ptr<backends::Compiler>> compiler,
    bool group_report = false);

}  // namespace cinn_like
