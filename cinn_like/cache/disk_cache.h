/// \file The persistent compile cache: compiled Programs as module files
/// (cinn_like/cache/module_file.h) in one directory that many processes share, so that a Program
/// compiled once, by any process on this machine, is loaded afterwards without NVRTC or LLVM.
///
/// An entry is the store's module entry <dir>/<key>.clm (cinn_like/cache/store.h), the key the
/// SHA-256 of a text that holds everything that changes the code: the Program's JSON, the
/// entry's name, the target with its arch, this host's CPU, every cinn_like flag except those
/// that only say where things go (dump and cache paths), the library itself (its path, size and
/// modification time: another build is another key) and, for GPUs, NVRTC's version. The entry
/// holds its key and is used only under it (a file copied or renamed to another entry's name is
/// refused). The store writes entries atomically; they are checked when read (a damaged or
/// truncated entry is removed and compiled again, never used), compiled by one process at a
/// time (DiskCacheCompileLock) and kept under the size cap cinn_like_cache_max_bytes, least
/// recently used first out (a hit touches its entry), by the store's eviction, which removes
/// only the store's own files.
///
/// Its entries are machine code that compiles load and run, so whoever can write the directory
/// can run code in every process that uses it: the directory, when this creates it, is its
/// user's alone (0700), and one that is not (owned by another user, or writable by its group or
/// others) is refused with a warning, and compiles run without the cache. Off
/// (cinn_like_cache=false) and bypassed while dumping, saving sources, tuning, self-checking or
/// planting debug failures: those compiles must run every stage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cinn_like/cache/module_file.h"
#include "cinn_like/cache/store.h"
#include "frontend/program.h"
#include "ir/target.h"

namespace cinn_like {

/// What the cache did in this process.
struct DiskCacheStats {
  int64_t hits = 0;          // entries loaded instead of compiling
  int64_t misses = 0;        // lookups that found no entry
  int64_t stores = 0;        // entries written
  int64_t damaged = 0;       // entries found damaged or not loadable: removed, compiled again
  int64_t evictions = 0;     // entries removed to keep the size cap
  int64_t write_errors = 0;  // entries that could not be written (the compile still succeeds)
  int64_t waits = 0;         // lookups that waited for another process's compile of the key
};
DiskCacheStats GetDiskCacheStats();
/// The counters as JSON: {"hits": 1, ...}.
std::string DiskCacheStatsJson();

/// The cache directory, or "" when compiles do not use the cache now (off, bypassed, or a
/// directory that cannot be created or is not this user's alone).
std::string DiskCacheDir();

/// The key (64 hex digits, the SHA-256 of the key text) of the Program whose JSON text is
/// `program_json` (frontend/program_json.h) compiled
/// as entry `name` for `target` (its arch resolved); `parsed`, where the caller has it, is that
/// Program (its ops say whether the key asks the libraries; else the text is read for them). The
/// text is keyed as it is: a Program spelled otherwise (another order of its keys, other spaces)
/// is another entry.
std::string DiskCacheKey(std::string_view program_json, const frontend::Program* parsed,
                         const ir::Target& target, const std::string& name);

/// Whether the Program in `json` has an op that may become a library call (an extern compute;
/// `*convolutions`: a convolution among them), the part of the key that asks the libraries,
/// read without parsing the text: such an op counts where its name appears quoted anywhere in
/// it (a tensor of that name too: more in the key than it needs, never less). A text with an
/// escape (a backslash), which might spell a name another way, is parsed; one that does not
/// parse counts as using every library.
bool ProgramJsonUsesLibraries(std::string_view json, bool* convolutions);

/// Held while a process looks entry `key` up and, on a miss, compiles and stores it: a process
/// (or thread) after the same key waits for the holder and then finds its entry, so ranks that
/// compile one Program at once compile it once. The store's lock of the key (StoreLock: a wait
/// ends after `max_wait_ms`, and then this process compiles as if it held the lock), its wait
/// counted as it begins.
class DiskCacheCompileLock {
 public:
  DiskCacheCompileLock(const std::string& dir, const std::string& key, int max_wait_ms = 120000);
  DiskCacheCompileLock(const DiskCacheCompileLock&) = delete;
  DiskCacheCompileLock& operator=(const DiskCacheCompileLock&) = delete;

  /// Whether another holder was waited for.
  bool waited() const { return lock_.waited(); }

 private:
  StoreLock lock_;
};

/// The checked image of entry `key` in `dir`, or nullopt (a miss; a damaged entry, one larger
/// than the cap, or one that holds another key is removed; what is not a regular file is left).
std::optional<ModuleImage> DiskCacheLookup(const std::string& dir, const std::string& key);

/// Entry `key`, looked up, was loaded: counted as a hit and marked recently used.
void DiskCacheHit(const std::string& dir, const std::string& key);

/// Entry `key` decoded but could not be loaded now for a reason not its own (no device memory,
/// say): kept, logged and counted as a miss.
void DiskCacheMiss(const std::string& dir, const std::string& key, const std::string& why);

/// Entry `key` is damaged (it does not decode, or its code does not link): it is removed and
/// counted.
void DiskCacheDiscard(const std::string& dir, const std::string& key, const std::string& why);

/// Writes entry `key` (`image` with its key set), then removes least recently used entries
/// above the cap. Failures (among them a file at the entry's path that is not a module file)
/// are logged and counted, never returned: the compile they follow succeeded.
void DiskCacheStore(const std::string& dir, const std::string& key, ModuleImage image);

}  // namespace cinn_like
