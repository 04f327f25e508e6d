/// \file The process's summed compile stages.
#include "cinn_like/pipeline/compile_stats.h"

#include <mutex>

#include <nlohmann/json.hpp>

namespace cinn_like {
namespace {

std::mutex mu;
CompileStats stats;

}  // namespace

CompileStats GetCompileStats() {
  std::lock_guard<std::mutex> lock(mu);
  return stats;
}

std::string CompileStatsJson() {
  const CompileStats s = GetCompileStats();
  const backends::CompileTimes& b = s.build;
  const double total = s.lower_ms + b.total_ms + s.cache_ms;
  return nlohmann::json{{"compiled", s.compiled},
                        {"loaded", s.loaded},
                        {"lower_ms", s.lower_ms},
                        {"library_check_ms", s.library_check_ms},
                        {"device_codegen_ms", b.device_codegen_ms},
                        {"nvrtc_ms", b.nvrtc_ms},
                        {"module_load_ms", b.module_load_ms},
                        {"host_codegen_ms", b.host_codegen_ms},
                        {"host_optimize_ms", b.host_optimize_ms},
                        {"orc_link_ms", b.orc_link_ms},
                        {"cache_ms", s.cache_ms},
                        {"total_ms", total},
                        {"prebuilt_kernels", b.prebuilt_kernels}}
      .dump();
}

void RecordCompile(bool loaded, double lower_ms, double library_check_ms,
                   const backends::CompileTimes& build, double cache_ms) {
  std::lock_guard<std::mutex> lock(mu);
  ++(loaded ? stats.loaded : stats.compiled);
  stats.lower_ms += lower_ms;
  stats.library_check_ms += library_check_ms;
  backends::CompileTimes& b = stats.build;
  b.device_codegen_ms += build.device_codegen_ms;
  b.nvrtc_ms += build.nvrtc_ms;
  b.module_load_ms += build.module_load_ms;
  b.host_codegen_ms += build.host_codegen_ms;
  b.host_optimize_ms += build.host_optimize_ms;
  b.orc_link_ms += build.orc_link_ms;
  b.total_ms += build.total_ms;
  b.prebuilt_kernels += build.prebuilt_kernels;
  stats.cache_ms += cache_ms;
}

}  // namespace cinn_like
