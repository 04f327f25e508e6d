/// \file Definitions of the flags, and their environment and dump helpers.
#include "ir/flags.h"

#include <glog/logging.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/files.h"

DEFINE_string(cinn_like_dump_dir, "",
              "if set, write every compilation stage (IR after each pass, CUDA source, PTX, host "
              "LLVM IR, compile-time breakdown) into this directory");
DEFINE_string(cinn_like_source_save_path, "",
              "if set, save the generated CUDA source (.cu) and PTX (.ptx) into this directory");
DEFINE_bool(cinn_like_nvrtc_compile_to_cubin, true,
            "compile CUDA with NVRTC to CUBIN (true) or to PTX that the driver JIT-compiles");
DEFINE_int32(cinn_like_nvrtc_units, 0,
             "NVGPU device code is compiled as this many CUDA translation units, each by NVRTC "
             "on its own thread (0: about three kernels per unit, up to the host's threads and "
             "at most 16; 1: the whole module at once on the compiling thread; always 1 while "
             "dumping or saving sources)");
DEFINE_bool(cinn_like_prebuilt_kernels, true,
            "load library kernels (the fused attention) from the CUBINs built with cinn_like "
            "(libcinn_like_kernels.bin) where they hold the target's arch, instead of compiling "
            "them with NVRTC (false: always NVRTC)");
DEFINE_string(cinn_like_cuda_arch, "",
              "force the CUDA architecture (sm_90 or 90); empty: read it from the device");
DEFINE_string(cinn_like_opencl_device, "",
              "the OpenCL device of the opencl target: empty for the first device of the "
              "target's kind (-device=cpu|gpu), a number for the n-th, else a case-insensitive "
              "part of '<platform> / <device>' (\"nvidia\", \"pthread\")");
DEFINE_int32(cinn_like_symbolic_row_threads, 256,
             "GPU threads per row of a row reduction whose length is symbolic, in the kernel for "
             "rows longer than every bucket of row lengths (hlir/row_buckets.h; the buckets take "
             "a warp per row or hold the row in registers): a multiple of 32 up to 256 (32: a "
             "warp per row, no block barrier; 0: 256)");
DEFINE_bool(cinn_like_fusion, true,
            "fuse graph ops into groups, one kernel per group (false: one group per op)");
DEFINE_bool(cinn_like_fusion_recompute, true,
            "a cheap value (elementwise, broadcast, injective) that several fusion groups read is "
            "computed in each of them instead of stored by a kernel of its own and read back "
            "(hlir/pass/recompute_shared.h)");
DEFINE_bool(cinn_like_extern_libs, true,
            "run matmul, linear and conv2d through libraries where the target has one that takes "
            "the case: cuBLAS/cuDNN on NVGPU, oneDNN on x86 (false: generated kernels)");
DEFINE_bool(cinn_like_pad_matmul, true,
            "on NVGPU, pad large matmuls whose operands' or product's rows are not a multiple of "
            "16 bytes with zeros and slice the product back, so that cuBLAS runs its aligned "
            "kernels (hlir/pass/matmul_padding.h)");
DEFINE_bool(cinn_like_merge_kernels, true,
            "on GPUs, loop nests that would be kernels of the same launch dims and touch no buffer "
            "another of them writes run as one kernel (ir/transforms/merge_nests.h): a launch less "
            "per nest merged");
DEFINE_string(cinn_like_decline_libraries, "",
              "libraries whose calls are declined, comma-separated (cuBLAS, cuBLASLt, cuDNN, "
              "oneDNN, cinn_like): the generated kernels run instead, the dump says why (a library "
              "suspected of a wrong result, and the tests of each fallback)");
DEFINE_bool(cinn_like_fast_math, false,
            "trade accuracy for speed in float math: CUDA uses __expf/__logf/__powf and rsqrtf "
            "and NVRTC gets --use_fast_math; LLVM sets the fast-math flags on float operations");

DEFINE_bool(cinn_like_check_indices, false,
            "GPU gathers check their indices on the host before reading (an out-of-range index "
            "is an error naming the op and the value, as on x86) instead of clamping them; the "
            "check synchronizes the device, so it is for debugging. Read when compiling");
DEFINE_string(cinn_like_debug_fail_op, "",
              "debugging: the graph compiler fails on every op of these names (comma-separated), "
              "as a compiler bug would; tests of the torch backend's failure isolation use it");
DEFINE_bool(cinn_like_autotune, false,
            "compiling times the values of each fusion group's tactic knob (threads per block, "
            "a row's bytes per thread, vector widths) on the device, the group alone on random "
            "inputs, and keeps the fastest; choices are remembered by the group's structure and "
            "the target, so a group is timed once");
DEFINE_bool(cinn_like_group_report, true,
            "with cinn_like_dump_dir set, a built compile also writes <name>.groups.txt: each "
            "fusion group compiled alone, timed on the device on random inputs and listed by "
            "time with its ops and tactics (where the time goes); costs each group a compile of "
            "its own and at least six calls of it");
DEFINE_string(cinn_like_autotune_cache, "",
              "a JSON file where the tuner's choices are kept across processes (read at the first "
              "tuned compile, rewritten atomically after each new choice); a choice found there "
              "is used without timing, so the same file gives the same schedules");
DEFINE_string(cinn_like_debug_wrong_op, "",
              "debugging: compiled code negates the results of every op of these names "
              "(comma-separated; bool results are flipped), a silent miscompile that the "
              "self-checks must find; their tests use it");
DEFINE_bool(cinn_like_self_check, false,
            "cinn_like_call runs functions compiled with this flag on against the reference "
            "interpreter on the call's inputs and fails naming the first differing instruction "
            "(slow: a debugging aid). Read when compiling and when calling");

DEFINE_bool(cinn_like_cache, true,
            "keep compiled Programs on disk (cinn_like_cache_dir) and load them instead of "
            "compiling again, in this process or another; off while dumping, saving sources, "
            "tuning or self-checking");
DEFINE_string(cinn_like_cache_dir, "",
              "the persistent cache's directory; empty: $CINN_LIKE_CACHE_DIR, else "
              "$XDG_CACHE_HOME/cinn_like, else ~/.cache/cinn_like");
DEFINE_int64(cinn_like_cache_max_bytes, int64_t{4} << 30,
             "the persistent cache's size cap: after each write the least recently used entries "
             "are removed until the directory's entries hold at most this many bytes");

namespace cinn_like {

namespace {

/// Whether `name` is one of cinn_like's own flags: named cinn_like_* and defined in this file.
bool IsCinnLikeFlag(const std::string& name) {
  if (name.rfind("cinn_like_", 0) != 0) return false;
  gflags::CommandLineFlagInfo info;
  // Defined in this file: gflags records the file of each DEFINE_*, the same __FILE__ string.
  return gflags::GetCommandLineFlagInfo(name.c_str(), &info) && info.filename == __FILE__;
}

/// The names of cinn_like's flags, for messages.
std::vector<std::string> CinnLikeFlagNames() {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::vector<std::string> names;
  for (auto& f : flags) {
    if (IsCinnLikeFlag(f.name)) names.push_back(f.name);
  }
  return names;
}

/// Sets every cinn_like flag whose FLAGS_<name> environment variable is set.
bool SetFlagsFromEnv() {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (auto& f : flags) {
    if (!IsCinnLikeFlag(f.name)) continue;
    const char* v = std::getenv(("FLAGS_" + f.name).c_str());
    if (!v) continue;
    if (gflags::SetCommandLineOption(f.name.c_str(), v).empty()) {
      LOG(WARNING) << "ignoring FLAGS_" << f.name << "=" << v << ": not a valid value";
    }
  }
  return true;
}

/// The one initialisation from the environment, when the library is loaded: defined after the
/// flags in this file, so it runs after they are registered (one file initialises in order).
[[maybe_unused]] const bool flags_from_env = SetFlagsFromEnv();

}  // namespace

bool SetFlag(const std::string& name, const std::string& value, std::string* error) {
  // gflags' own flags (flagfile, fromenv, v, logtostderr...) read files, exit the process or
  // change the host's logging: only cinn_like's flags are settable here.
  if (!IsCinnLikeFlag(name)) {
    if (error) {
      std::string known;
      for (auto& n : CinnLikeFlagNames()) known += (known.empty() ? "" : ", ") + n;
      *error = "unknown flag '" + name + "': only cinn_like's flags can be set (" + known + ")";
    }
    return false;
  }
  gflags::CommandLineFlagInfo info;
  gflags::GetCommandLineFlagInfo(name.c_str(), &info);
  // gflags parses the value by the flag's type (bool: true/false/1/0/yes/no; integers whole
  // and in range; strings as given) and changes nothing when it does not parse.
  if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
    if (error)
      *error = "invalid value '" + value + "' for flag '" + name + "' of type " + info.type;
    return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> CinnLikeFlagValues() {
  std::vector<std::pair<std::string, std::string>> values;
  for (const std::string& name : CinnLikeFlagNames())
    values.emplace_back(name, StringFlag(name.c_str()));
  return values;
}

std::string StringFlag(const char* name) {
  std::string value;
  CHECK(gflags::GetCommandLineOption(name, &value)) << "no flag " << name;  // ours: a typo
  return value;
}

namespace {

/// `dir` (created when missing) when it is this user's alone (runtime::CheckPrivateDirectory),
/// else "" with a warning, once per directory: a dump written into a directory others can change
/// could be read back by tools as ours, or planted links could aim it at the user's files.
std::string UsableDirectory(const std::string& dir, const char* what) {
  if (dir.empty()) return "";
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec) && !ec) {
    // Made here: the user's to change alone, whatever the umask (002 would let the group write).
    std::filesystem::permissions(
        dir, std::filesystem::perms::group_write | std::filesystem::perms::others_write,
        std::filesystem::perm_options::remove, ec);
  }
  absl::Status usable =
      ec ? absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()))
         : runtime::CheckPrivateDirectory(dir);
  if (usable.ok()) return dir;
  static std::mutex warned_mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(warned_mu);
  if (warned.insert(dir).second) {
    LOG(WARNING) << what << ": " << usable.message() << "; not written";
  }
  return "";
}

/// Writes `text` to <dir>/SafeFileName(file), never through a link planted there.
void WriteIntoDirectory(const std::string& dir, const std::string& file, const std::string& text) {
  if (dir.empty()) return;
  absl::Status written = runtime::WriteFileNoFollow(dir + "/" + SafeFileName(file), text);
  if (!written.ok()) LOG(WARNING) << written.message();
}

/// How many DumpOffScopes are alive on this thread.
thread_local int dump_off_scopes = 0;

}  // namespace

DumpOffScope::DumpOffScope() { ++dump_off_scopes; }
DumpOffScope::~DumpOffScope() { --dump_off_scopes; }

bool DumpIsOff() { return dump_off_scopes > 0; }

std::string DumpDir() {
  if (DumpIsOff()) return "";
  return UsableDirectory(StringFlag("cinn_like_dump_dir"), "cinn_like_dump_dir");
}

std::string SafeFileName(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || (c == '.' && !out.empty() && out.back() != '.');
    out.push_back(keep ? c : '_');
  }
  return out.empty() ? "_" : out;
}

void DumpToFile(const std::string& file, const std::string& text) {
  WriteIntoDirectory(DumpDir(), file, text);
}

void SaveSourceFile(const std::string& file, const std::string& text) {
  if (DumpIsOff()) return;
  WriteIntoDirectory(
      UsableDirectory(StringFlag("cinn_like_source_save_path"), "cinn_like_source_save_path"), file,
      text);
}

}  // namespace cinn_like
