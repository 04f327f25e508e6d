/// \file CompileOptions: every flag that changes generated code, read once when a compile
/// starts. The persistent cache's key and every step of the compile read this one snapshot, so
/// a flag another thread changes meanwhile cannot make code that its key does not describe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cinn_like::ir {

/// Whether flag `name` (a cinn_like flag) can change generated code: every flag but those that
/// say where output goes (or what a dump holds) or how the persistent cache behaves.
bool ChangesCode(const std::string& name);

/// The code-changing flags' values at one moment, immutable once read.
struct CompileOptions {
  /// Every flag for which ChangesCode holds, as (name, value) sorted by name: what the cache key
  /// holds. The fields below are parsed from these same values.
  std::vector<std::pair<std::string, std::string>> values;

  bool fusion = true;
  bool fusion_recompute = true;
  bool extern_libs = true;
  bool fast_math = false;
  bool nvrtc_compile_to_cubin = true;
  bool prebuilt_kernels = true;
  bool autotune = false;
  bool check_indices = false;
  bool self_check = false;
  bool pad_matmul = true;
  bool merge_kernels = true;
  int32_t symbolic_row_threads = 256;
  int32_t nvrtc_units = 0;
  std::string cuda_arch, opencl_device, decline_libraries, debug_fail_op, debug_wrong_op;

  /// The flags now, each read once (under gflags' lock, one at a time).
  static CompileOptions Read();
};

/// The options of the compile running on this thread: the snapshot the innermost
/// CompileOptionsScope of this thread installed, else the flags as they are now (read anew at
/// each call: code outside a compile, a test calling one layer directly).
const CompileOptions& CurrentCompileOptions();

/// Installs `options` as this thread's CurrentCompileOptions() while alive. A compile installs a
/// fresh CompileOptions::Read() at its start; a thread it starts installs the same snapshot.
class CompileOptionsScope {
 public:
  explicit CompileOptionsScope(std::shared_ptr<const CompileOptions> options);
  ~CompileOptionsScope();
  CompileOptionsScope(const CompileOptionsScope&) = delete;
  CompileOptionsScope& operator=(const CompileOptionsScope&) = delete;

 private:
  std::shared_ptr<const CompileOptions> previous_;
};

/// This thread's installed snapshot (null outside a compile), to hand to a thread it starts.
std::shared_ptr<const CompileOptions> InstalledCompileOptions();

}  // namespace cinn_like::ir
