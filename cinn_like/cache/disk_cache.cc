/// \file The persistent compile cache's directory, keys, lookups, writes and eviction.
#include "cinn_like/cache/disk_cache.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "backends/library_environment.h"
#include "backends/llvm/execution_engine.h"
#include "frontend/program_json.h"
#include "hlir/op.h"
#include "ir/compile_options.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "runtime/files.h"
#include "runtime/sha256.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "backends/cuda/nvrtc_compiler.h"
#endif

namespace cinn_like {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEntrySuffix = ".clm";
// The torch backend's graph plans (cinn_like/python/cinn_like/torch/plan_cache.py): entries of
// this directory too, under the same cap.
constexpr const char* kPlanSuffix = ".clp";
constexpr const char* kLockSuffix = ".lock";
constexpr const char* kTmpInfix = ".tmp.";

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

std::string EntryPath(const std::string& dir, const std::string& key) {
  return (fs::path(dir) / (key + kEntrySuffix)).string();
}

/// Whether `text` is `n` lower-case hex digits.
bool IsHex(std::string_view text, size_t n) {
  return text.size() == n && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

/// Whether `name` starts with a key this cache or the plan cache makes, then a dot: 64 hex
/// digits (a SHA-256), 32 (the plan cache's names, a SHA-256 cut) or 16 (the FNV-1a keys of module
/// file version 2 and before); `*rest` is what follows.
bool StartsWithKey(std::string_view name, std::string_view* rest) {
  for (size_t n : {size_t{64}, size_t{32}, size_t{16}}) {
    if (name.size() > n && IsHex(name.substr(0, n), n) && name[n] == '.') {
      *rest = name.substr(n);
      return true;
    }
  }
  return false;
}

/// Whether `text` is one or more decimal digits.
bool IsNumber(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// What a file of the cache's directory is, by its name: the cache's own are <key>.clm,
/// <key>.clp (the plan cache's), <key>.lock and their temporary files
/// <key>.clm.tmp.<pid>.<serial> (<key>.clp.tmp.<pid>.<thread>); anything else is not the
/// cache's and is never removed or counted.
enum class OwnFile { kNotOurs, kEntry, kLock, kTemporary };
OwnFile ClassifyName(std::string_view name) {
  std::string_view rest;
  if (!StartsWithKey(name, &rest)) return OwnFile::kNotOurs;
  if (rest == kEntrySuffix || rest == kPlanSuffix) return OwnFile::kEntry;
  if (rest == kLockSuffix) return OwnFile::kLock;
  for (const char* suffix : {kEntrySuffix, kPlanSuffix}) {
    const std::string prefix = absl::StrCat(suffix, kTmpInfix);
    if (rest.substr(0, prefix.size()) != prefix) continue;
    rest.remove_prefix(prefix.size());
    const size_t dot = rest.find('.');
    if (dot != std::string_view::npos && IsNumber(rest.substr(0, dot)) &&
        IsNumber(rest.substr(dot + 1))) {
      return OwnFile::kTemporary;
    }
  }
  return OwnFile::kNotOurs;
}

/// Whether `path` is a regular file (not a link, a directory, a device or a FIFO).
bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Removes the cache's file at `path`: only a regular file (what the cache writes).
void RemoveEntry(const std::string& path) {
  if (!IsRegularFile(path)) return;
  std::error_code ec;
  fs::remove(path, ec);  // another process may have removed it first
}

/// Removes the least recently used entries until those left hold at most the cap; `keep` (the
/// entry just written) goes last of all. Only the cache's own files count (ClassifyName).
void Evict(const std::string& dir, const std::string& keep) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uintmax_t size;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const OwnFile kind = ClassifyName(it->path().filename().string());
    std::error_code e;
    if (kind == OwnFile::kNotOurs || !it->is_regular_file(e) || it->is_symlink(e)) continue;
    if (kind == OwnFile::kTemporary || kind == OwnFile::kLock) {
      // A temporary file or a lock an hour old belongs to a writer that died.
      const auto age = fs::file_time_type::clock::now() - fs::last_write_time(it->path(), e);
      if (!e && age > std::chrono::hours(1)) RemoveEntry(it->path().string());
      continue;
    }
    std::error_code e1, e2;
    const uintmax_t size = fs::file_size(it->path(), e1);
    const fs::file_time_type used = fs::last_write_time(it->path(), e2);
    if (e1 || e2) continue;  // removed meanwhile
    entries.push_back({it->path(), used, size});
    total += size;
  }
  const uintmax_t cap = CapBytes();
  if (total <= cap) return;
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    const bool a_kept = a.path == keep, b_kept = b.path == keep;
    if (a_kept != b_kept) return b_kept;
    return a.used < b.used;
  });
  for (const Entry& e : entries) {
    if (total <= cap) break;
    RemoveEntry(e.path.string());
    total -= e.size;
    Count(&DiskCacheStats::evictions);
  }
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
    : path_((fs::path(dir) / (key + kLockSuffix)).string()) {
  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_wait_ms);
  while (true) {
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
      // Held, but maybe on a file its last holder removed (and another process has made a new
      // one at the path since): the lock counts only on the file the path names now.
      struct stat held {
      }, named{};
      if (fstat(fd_, &held) == 0 && stat(path_.c_str(), &named) == 0 &&
          held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
        held_ = true;
        break;
      }
      close(fd_);
      fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd_ < 0) return;
      continue;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) break;  // no locks here: compile unlocked
    if (!waited_) {
      waited_ = true;
      Count(&DiskCacheStats::waits);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      LOG(WARNING) << "cinn_like cache: waited " << max_wait_ms << " ms for " << path_
                   << "; compiling without it";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

DiskCacheCompileLock::~DiskCacheCompileLock() {
  if (fd_ < 0) return;
  // Removed while held: a process that opened it before gets this file's lock, sees that the
  // path no longer names it and opens the path again.
  if (held_) unlink(path_.c_str());
  close(fd_);  // releases the lock
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
  std::error_code ec;
  // Entries are machine code this process will run: the directory is its user's alone.
  if (fs::create_directories(dir, ec) && !ec) {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  absl::Status usable =
      ec ? absl::UnavailableError(absl::StrCat("cannot create ", dir, " (", ec.message(), ")"))
         : runtime::CheckPrivateDirectory(dir);
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
  return runtime::Sha256Hex(text);
}

std::optional<ModuleImage> DiskCacheLookup(const std::string& dir, const std::string& key) {
  const std::string path = EntryPath(dir, key);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    Count(&DiskCacheStats::misses);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    // Not a file this cache wrote (a link, a FIFO): neither read nor removed.
    DiskCacheMiss(dir, key, "it is not a regular file, so not an entry of this cache");
    return std::nullopt;
  }
  // Nothing larger than the cap is an entry of this cache.
  auto bytes = runtime::ReadRegularFile(path, "cache entry", CapBytes());
  if (absl::IsNotFound(bytes.status())) {  // removed meanwhile (evicted by another process)
    Count(&DiskCacheStats::misses);
    return std::nullopt;
  }
  if (!bytes.ok()) {
    DiskCacheDiscard(dir, key, std::string(bytes.status().message()));
    return std::nullopt;
  }
  auto image = DecodeModuleImage(*bytes, "cache entry " + path);
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
  std::error_code ec;
  fs::last_write_time(EntryPath(dir, key), fs::file_time_type::clock::now(), ec);  // recently used
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
  RemoveEntry(EntryPath(dir, key));
  Count(&DiskCacheStats::damaged);
}

void DiskCacheStore(const std::string& dir, const std::string& key, ModuleImage image) {
  const std::string path = EntryPath(dir, key);
  image.key = key;
  absl::Status written = runtime::WriteFileAtomically(path, EncodeModuleImage(image),
                                                      kModuleFileMagic, kModuleFileFormat);
  if (!written.ok()) {
    LOG(WARNING) << "cinn_like cache: " << written.message();
    Count(&DiskCacheStats::write_errors);
    return;
  }
  Count(&DiskCacheStats::stores);
  Evict(dir, path);
}

}  // namespace cinn_like
