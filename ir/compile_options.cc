/// \file CompileOptions: the code-changing flags read once per compile.
#include "ir/compile_options.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/numbers.h"
#include "ir/flags.h"

namespace cinn_like::ir {
namespace {

thread_local std::shared_ptr<const CompileOptions> installed;

bool Bool(const std::string& v) { return v == "true" || v == "1"; }

int32_t Int(const std::string& v, int32_t fallback) {
  int32_t out = 0;
  return absl::SimpleAtoi(v, &out) ? out : fallback;
}

}  // namespace

bool ChangesCode(const std::string& name) {
  static const char* const kPlaces[] = {"cinn_like_dump_dir",        "cinn_like_source_save_path",
                                        "cinn_like_cache",           "cinn_like_cache_dir",
                                        "cinn_like_cache_max_bytes", "cinn_like_autotune_cache",
                                        "cinn_like_group_report"};
  return std::find(std::begin(kPlaces), std::end(kPlaces), name) == std::end(kPlaces);
}

CompileOptions CompileOptions::Read() {
  CompileOptions o;
  for (auto& [name, value] : CinnLikeFlagValues()) {
    if (!ChangesCode(name)) continue;
    const std::string n = name.substr(std::string("cinn_like_").size());
    if (n == "fusion") o.fusion = Bool(value);
    if (n == "fusion_recompute") o.fusion_recompute = Bool(value);
    if (n == "extern_libs") o.extern_libs = Bool(value);
    if (n == "fast_math") o.fast_math = Bool(value);
    if (n == "nvrtc_compile_to_cubin") o.nvrtc_compile_to_cubin = Bool(value);
    if (n == "prebuilt_kernels") o.prebuilt_kernels = Bool(value);
    if (n == "autotune") o.autotune = Bool(value);
    if (n == "check_indices") o.check_indices = Bool(value);
    if (n == "self_check") o.self_check = Bool(value);
    if (n == "pad_matmul") o.pad_matmul = Bool(value);
    if (n == "merge_kernels") o.merge_kernels = Bool(value);
    if (n == "symbolic_row_threads") o.symbolic_row_threads = Int(value, 256);
    if (n == "nvrtc_units") o.nvrtc_units = Int(value, 0);
    if (n == "cuda_arch") o.cuda_arch = value;
    if (n == "opencl_device") o.opencl_device = value;
    if (n == "decline_libraries") o.decline_libraries = value;
    if (n == "debug_fail_op") o.debug_fail_op = value;
    if (n == "debug_wrong_op") o.debug_wrong_op = value;
    o.values.emplace_back(name, value);
  }
  return o;
}

const CompileOptions& CurrentCompileOptions() {
  if (installed) return *installed;
  thread_local CompileOptions now;
  now = CompileOptions::Read();
  return now;
}

std::shared_ptr<const CompileOptions> InstalledCompileOptions() { return installed; }

CompileOptionsScope::CompileOptionsScope(std::shared_ptr<const CompileOptions> options)
    : previous_(std::move(installed)) {
  installed = std::move(options);
}

CompileOptionsScope::~CompileOptionsScope() { installed = std::move(previous_); }

}  // namespace cinn_like::ir
