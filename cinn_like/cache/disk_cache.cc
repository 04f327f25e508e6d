/// \file The persistent compile cache: its directory, keys, lookups, stores and counters, over the
/// persistent store (store.h).
#include "cinn_like/cache/disk_cache.h"

#include <glog/logging.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "backends/library_environment.h"
#include "backends/llvm/execution_engine.h"
#include "cinn_like/cache/store.h"
#include "frontend/program_json.h"
#include "hlir/op.h"
#include "ir/compile_options.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "runtime/files.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "backends/cuda/nvrtc_compiler.h"
#endif

namespace cinn_like {
namespace {

namespace fs = std::filesystem;

std::mutex stats_mu;
DiskCacheStats stats;

void Count(int64_t DiskCacheStats::*counter) {
  std::lock_guard<std::mutex> lock(stats_mu);
  ++(stats.*counter);
}

/// This library's file, size and modification time: a rebuilt library makes other keys.
std::string LibraryIdentity() {
  static const std::string identity = [] {
    const std::string path = runtime::ThisLibraryPath();
    if (path.empty()) return std::string("unknown library");
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return path;
    return absl::StrCat(path, " ", st.st_size, " ", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
  }();
  return identity;
}

/// Which library calls the ops of `program` may become (ops with an extern compute): none,
/// some (`*convolutions` whether a convolution is among them).
bool UsesLibraries(const frontend::Program& program, bool* convolutions) {
  bool any = false;
  *convolutions = false;
  for (const frontend::Instruction& instruction : program.instructions) {
    auto def = hlir::OpRegistry::Global().Find(instruction.op);
    if (!def.ok() || !(*def)->extern_compute) continue;
    any = true;
    if (instruction.op.find("conv") != std::string::npos) *convolutions = true;
  }
  return any;
}

/// The size cap, cinn_like_cache_max_bytes (a negative value: nothing is kept).
uintmax_t CapBytes() {
  return static_cast<uintmax_t>(std::max<int64_t>(0, FLAGS_cinn_like_cache_max_bytes));
}

/// The entry's path, for messages.
std::string EntryPath(const std::string& dir, const std::string& key) {
  return Store(dir).Path(StoreKind::kModule, key);
}

}  // namespace

bool ProgramJsonUsesLibraries(std::string_view json, bool* convolutions) {
  if (json.find('\\') != std::string_view::npos) {
    auto program = frontend::ProgramFromJson(std::string(json));
    if (program.ok()) return UsesLibraries(*program, convolutions);
    *convolutions = true;  // unread: more in the key than needed, never less
    return true;
  }
  static const std::vector<std::string> quoted = [] {
    std::vector<std::string> names;
    const hlir::OpRegistry& registry = hlir::OpRegistry::Global();
    for (const std::string& name : registry.Names()) {
      if ((*registry.Find(name))->extern_compute) names.push_back(absl::StrCat("\"", name, "\""));
    }
    return names;
  }();
  bool any = false;
  *convolutions = false;
  for (const std::string& name : quoted) {
    if (json.find(name) == std::string_view::npos) continue;
    any = true;
    if (name.find("conv") != std::string::npos) *convolutions = true;
  }
  return any;
}

DiskCacheStats GetDiskCacheStats() {
  std::lock_guard<std::mutex> lock(stats_mu);
  return stats;
}

std::string DiskCacheStatsJson() {
  const DiskCacheStats s = GetDiskCacheStats();
  return nlohmann::json{{"hits", s.hits},           {"misses", s.misses},
                        {"stores", s.stores},       {"damaged", s.damaged},
                        {"evictions", s.evictions}, {"write_errors", s.write_errors},
                        {"waits", s.waits}}
      .dump();
}

DiskCacheCompileLock::DiskCacheCompileLock(const std::string& dir, const std::string& key,
                                           int max_wait_ms)
    : lock_(dir, key, max_wait_ms, [] { Count(&DiskCacheStats::waits); }) {
  if (lock_.waited() && !lock_.held()) {
    LOG(WARNING) << "cinn_like cache: waited " << max_wait_ms << " ms for " << lock_.path()
                 << "; compiling without it";
  }
}

std::string DiskCacheDir() {
  // The code-changing ones from this compile's snapshot (the key's), the others as they are.
  const ir::CompileOptions& options = ir::CurrentCompileOptions();
  if (!FLAGS_cinn_like_cache || options.autotune || options.self_check ||
      !options.debug_fail_op.empty() || !options.debug_wrong_op.empty()) {
    return "";
  }
  for (const char* off : {"cinn_like_dump_dir", "cinn_like_source_save_path"}) {
    if (!StringFlag(off).empty()) return "";
  }
  std::string dir = StringFlag("cinn_like_cache_dir");
  if (dir.empty()) {
    if (const char* env = std::getenv("CINN_LIKE_CACHE_DIR"); env && *env) {
      dir = env;
    } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
      dir = (fs::path(xdg) / "cinn_like").string();
    } else if (const char* home = std::getenv("HOME"); home && *home) {
      dir = (fs::path(home) / ".cache" / "cinn_like").string();
    } else {
      return "";
    }
  }
  // Made and checked by the store: its user's alone.
  absl::Status usable = Store::Open(dir).status();
  if (!usable.ok()) {
    // Said once per directory: a process compiles many Programs.
    static std::mutex warned_mu;
    static std::set<std::string> warned;
    std::lock_guard<std::mutex> lock(warned_mu);
    if (warned.insert(dir).second) {
      LOG(WARNING) << "cinn_like cache: " << usable.message() << ": compiling without the cache";
    }
    return "";
  }
  return dir;
}

std::string DiskCacheKey(std::string_view program_json, const frontend::Program* parsed,
                         const ir::Target& target, const std::string& name) {
  std::string text = absl::StrCat("module file ", kModuleFileVersion, "\n", LibraryIdentity(), "\n",
                                  target.ToString(), "\n", name, "\n");
  auto host = backends::HostCodeDescription();
  absl::StrAppend(&text, host.ok() ? *host : "unknown host", "\n");
  // The schedules' device sizes (two sm_90 parts differ in SM count) and the libraries the
  // compile-time checks found.
  const ir::DeviceProperties& device = ir::DevicePropertiesOf(target);
  absl::StrAppend(&text, "device ", device.multiprocessors, " ", device.max_threads_per_block, " ",
                  device.shared_memory_per_block, " ", device.vector_bytes, "\n");
  // An OpenCL entry holds OpenCL C for the dtypes of the device it was made on.
  if (target.is_opencl()) absl::StrAppend(&text, device.source, "\n");
  // Asked only for Programs with an op a library may run (loading cuDNN costs a warm compile
  // more than all the rest).
  bool convolutions = false;
  if (parsed ? UsesLibraries(*parsed, &convolutions)
             : ProgramJsonUsesLibraries(program_json, &convolutions)) {
    absl::StrAppend(&text, backends::LibraryEnvironment(target, convolutions), "\n");
  }
#ifdef CINN_LIKE_WITH_CUDA
  if (target.is_nvgpu())
    absl::StrAppend(&text, "nvrtc ", backends::nvrtc::Compiler::Version(), "\n");
#endif
  // The compile's snapshot, which its lowering reads too (a flag changed meanwhile by another
  // thread is in neither).
  for (const auto& [flag, value] : ir::CurrentCompileOptions().values) {
    absl::StrAppend(&text, flag, "=", value, "\n");
  }
  text.append(program_json);
  return StoreKey(text);
}

std::optional<ModuleImage> DiskCacheLookup(const std::string& dir, const std::string& key) {
  // Nothing larger than the cap is an entry of this cache.
  auto bytes = Store(dir).Read(StoreKind::kModule, key, CapBytes());
  if (!bytes.ok()) {
    switch (MissOf(bytes.status())) {
      case StoreMiss::kAbsent:  // or removed meanwhile (evicted by another process)
        Count(&DiskCacheStats::misses);
        break;
      case StoreMiss::kRefused:  // not a file this cache wrote (a link, a FIFO): left alone
        DiskCacheMiss(dir, key, "it is not a regular file, so not an entry of this cache");
        break;
      case StoreMiss::kDamaged:
        DiskCacheDiscard(dir, key, std::string(bytes.status().message()));
        break;
    }
    return std::nullopt;
  }
  auto image = DecodeModuleImage(*bytes, "cache entry " + EntryPath(dir, key));
  if (!image.ok()) {
    DiskCacheDiscard(dir, key, std::string(image.status().message()));
    return std::nullopt;
  }
  // Bound to its key: an entry written for another key (a file copied or renamed into this
  // name) is not this Program's code.
  if (image->key != key) {
    DiskCacheDiscard(dir, key,
                     absl::StrCat("it holds the entry of key '", image->key, "', not of its name"));
    return std::nullopt;
  }
  return *std::move(image);
}

void DiskCacheHit(const std::string& dir, const std::string& key) {
  Store(dir).Touch(StoreKind::kModule, key);  // recently used
  Count(&DiskCacheStats::hits);
}

void DiskCacheMiss(const std::string& dir, const std::string& key, const std::string& why) {
  LOG(WARNING) << "cinn_like cache: compiling instead of loading " << EntryPath(dir, key) << ": "
               << why;
  Count(&DiskCacheStats::misses);
}

void DiskCacheDiscard(const std::string& dir, const std::string& key, const std::string& why) {
  LOG(WARNING) << "cinn_like cache: compiling again and replacing " << EntryPath(dir, key) << ": "
               << why;
  Store(dir).Remove(StoreKind::kModule, key);
  Count(&DiskCacheStats::damaged);
}

void DiskCacheStore(const std::string& dir, const std::string& key, ModuleImage image) {
  const Store store(dir);
  image.key = key;
  absl::Status written =
      store.Write(StoreKind::kModule, key, EncodeModuleImage(image), kModuleFile);
  if (!written.ok()) {
    LOG(WARNING) << "cinn_like cache: " << written.message();
    Count(&DiskCacheStats::write_errors);
    return;
  }
  Count(&DiskCacheStats::stores);
  const int evicted = store.Evict(CapBytes(), store.Path(StoreKind::kModule, key));
  std::lock_guard<std::mutex> lock(stats_mu);
  stats.evictions += evicted;
}

}  // namespace cinn_like
