/// \file Every behaviour switch of cinn_like, as gflags. All flags live in this one file; ir is
/// the lowest layer every compiler layer already includes, so any layer may read them.
///
/// Flags from the environment, in one place: when libcinn_like is loaded (before the host's
/// main, before any command line is parsed), every cinn_like flag whose FLAGS_<name> variable
/// is set takes that value, once (a bad value is ignored with a warning). Nothing needs to call
/// anything: every entry (CompileProgram, the C API, Python, Compiler::Create, the tools, the
/// tests) sees them. Whatever sets a flag afterwards (a tool's command line, SetFlag, the C
/// API's cinn_like_set_flag, an assignment in a test) overrides the environment.
#pragma once

#include <gflags/gflags.h>

#include <string>
#include <utility>
#include <vector>

// Debug output.
DECLARE_string(cinn_like_dump_dir);          // IR after each pass, host LLVM IR, CUDA, PTX, timings
DECLARE_string(cinn_like_source_save_path);  // where generated CUDA source and PTX are saved
// CUDA code generation.
DECLARE_bool(cinn_like_nvrtc_compile_to_cubin);  // CUBIN (true) or PTX (false)
DECLARE_int32(cinn_like_symbolic_row_threads);   // threads per long symbolic row (256)
DECLARE_int32(cinn_like_nvrtc_units);            // translation units compiled at once (0: auto)
DECLARE_bool(cinn_like_prebuilt_kernels);        // library kernels from libcinn_like_kernels.bin
DECLARE_string(cinn_like_cuda_arch);             // force an arch ("sm_90" or "90"); empty: device
// OpenCL.
DECLARE_string(cinn_like_opencl_device);  // "" the first device, "N" the n-th, or a name part
// Graph passes.
DECLARE_bool(cinn_like_fusion);  // fuse ops into groups (false: one kernel per op)
DECLARE_bool(
    cinn_like_extern_libs);  // matmul/conv: cuBLAS/cuDNN on NVGPU, oneDNN on x86 (false: generated)
DECLARE_bool(cinn_like_fusion_recompute);  // recompute shared cheap values per group
DECLARE_bool(cinn_like_pad_matmul);        // pad NVGPU matmuls to 16-byte rows (matmul_padding.h)
DECLARE_bool(cinn_like_merge_kernels);     // independent GPU nests of one launch shape: one kernel
// Numerics.
DECLARE_bool(
    cinn_like_fast_math);  // CUDA __expf/__logf/__powf, rsqrtf, --use_fast_math; LLVM fast flags
// Tuning (cinn_like/tune/autotune.h).
DECLARE_bool(cinn_like_autotune);  // time each group's tactic knobs on the device, keep the best
DECLARE_string(
    cinn_like_autotune_cache);  // JSON file of the tuner's choices (empty: this process only)
DECLARE_bool(cinn_like_group_report);  // with a dump dir: each group timed alone, <name>.groups.txt
// Debugging.
DECLARE_string(cinn_like_decline_libraries);  // libraries declined (comma-separated)
DECLARE_bool(cinn_like_check_indices);        // GPU gathers check indices (synchronizes) vs clamp
DECLARE_string(cinn_like_debug_fail_op);      // ops (comma-separated) the graph compiler fails on
// Accuracy self-check (cinn_like/verify/call_check.h).
DECLARE_bool(cinn_like_self_check);        // cinn_like_call checks outputs against the reference
DECLARE_string(cinn_like_debug_wrong_op);  // ops (comma-separated) whose results are negated
// The persistent compile cache (cinn_like/cache/disk_cache.h).
DECLARE_bool(cinn_like_cache);             // use it (on by default)
DECLARE_string(cinn_like_cache_dir);       // its directory (empty: CINN_LIKE_CACHE_DIR, ~/.cache)
DECLARE_int64(cinn_like_cache_max_bytes);  // its size cap (least recently used entries go)

namespace cinn_like {

/// Sets a flag by name; returns false (with a message in *error) when the name is unknown or
/// the value does not parse.
bool SetFlag(const std::string& name, const std::string& value, std::string* error);

/// Every cinn_like flag as (name, value), sorted by name.
std::vector<std::pair<std::string, std::string>> CinnLikeFlagValues();

/// The value of the string flag `name` (cinn_like_dump_dir, ...), copied under gflags' lock:
/// SetFlag may change it from another thread, and reading FLAGS_<name> (a std::string) while it
/// does is a data race. Bool and int flags are read directly.
std::string StringFlag(const char* name);

/// The dump directory for one artefact: "" when dumping is off or the directory is not this
/// user's alone (owned by another user, or writable by its group or others: refused with a
/// warning, once), else the directory (created).
std::string DumpDir();

/// While one is alive on a thread, dumping is off there (DumpDir() is "", SaveSourceFile writes
/// nothing): the compiles a compile makes for its own report (the group report's groups,
/// group_report.h) neither dump their stages beside it nor save their sources. A thread a
/// compile starts carries it over (DumpIsOff).
class DumpOffScope {
 public:
  DumpOffScope();
  ~DumpOffScope();
  DumpOffScope(const DumpOffScope&) = delete;
  DumpOffScope& operator=(const DumpOffScope&) = delete;
};

/// Whether a DumpOffScope is alive on this thread.
bool DumpIsOff();

/// `name` as one file name that stays inside its folder: letters, digits, '_', '-' and '.' are
/// kept, any other byte ('/', '\\', spaces...) becomes '_', as does a '.' that would lead the
/// name or follow another '.' (so no "..", no hidden file); "" becomes "_". Function names come
/// from the host (the C API's `name`) and reach file names only through here.
std::string SafeFileName(const std::string& name);

/// Writes `text` to <dump dir>/SafeFileName(file) when dumping is on; a symbolic link at that
/// name is not followed (the file is not written, with a warning).
void DumpToFile(const std::string& file, const std::string& text);

/// Writes `text` to <cinn_like_source_save_path>/SafeFileName(file) when that flag is set, as
/// DumpToFile writes into the dump directory (the same checks of the directory and the file).
void SaveSourceFile(const std::string& file, const std::string& text);

}  // namespace cinn_like
