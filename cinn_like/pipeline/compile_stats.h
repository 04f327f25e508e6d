/// \file Where this process's compile time went: every CompileProgram's stages summed, for the
/// compile-time benchmark (tools/compile_bench.py) and hosts that want to know.
#pragma once

#include <string>

#include "backends/compiler.h"

namespace cinn_like {

struct CompileStats {
  int64_t compiled = 0;          // Programs compiled (every stage run)
  int64_t loaded = 0;            // Programs loaded from the persistent cache
  double lower_ms = 0;           // graph passes, fusion, lowering and scheduling (tuning too)
  double library_check_ms = 0;   // of lower_ms: libraries loaded and asked (cuDNN plans made;
                                 // those made beside the Build: the wait for them after it)
  backends::CompileTimes build;  // Compiler::Build's stages, summed
  double cache_ms = 0;           // cache lookups, loads of entries and writes
};

CompileStats GetCompileStats();
/// The counters as JSON: {"compiled", "loaded", "lower_ms", "library_check_ms" (part of
/// lower_ms), "device_codegen_ms", "nvrtc_ms",
/// "module_load_ms", "host_codegen_ms", "host_optimize_ms", "orc_link_ms", "cache_ms",
/// "total_ms"} (total_ms: all the milliseconds above but library_check_ms, which lower_ms holds).
std::string CompileStatsJson();

/// Adds one CompileProgram's figures (cinn_like/compile.cc: a cache hit's, or the pipeline's
/// times, cinn_like/pipeline/lower_and_build.h, with the cache's).
void RecordCompile(bool loaded, double lower_ms, double library_check_ms,
                   const backends::CompileTimes& build, double cache_ms);

}  // namespace cinn_like
