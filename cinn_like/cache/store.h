/// \file The persistent store: one directory of files that the processes of a machine share
/// and trust, and the one place that names, reads, writes, locks and evicts them. The compile
/// cache keeps its module files here (disk_cache.h), and the torch backend its graph plans
/// (through the C API's cinn_like_store_*).
///
/// An entry is <dir>/<key><suffix>: the key (StoreKey) 64 lower-case hex digits, the suffix its
/// kind's (.clm a module file, .clp a keyed record of a plan). Entries are written atomically
/// (a temporary file <entry>.tmp.<pid>.<serial> made anew, then renamed: a reader sees the old
/// entry or the whole new one, and writers of one key at once leave one whole entry), over
/// nothing but a regular file of their own format; they are read only when a regular file (a
/// link, FIFO or device at an entry's path is neither read, removed nor replaced), and checked
/// (record.h) before use. A lock per key (<key>.lock, flock) lets one process at a time do a
/// key's work. Eviction keeps a size cap, least recently used first, and removes only what the
/// store itself names so (its entries, its locks and temporary files, also those of the 32- and
/// 16-digit keys of older versions): any other file of the directory is left alone.
///
/// Its entries are what processes load and run, so whoever can write the directory can run code
/// in every process that uses it: Open makes the directory its user's alone (0700) and refuses
/// one that is not.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cinn_like/cache/record.h"

namespace cinn_like {

/// What an entry holds, which says its suffix.
enum class StoreKind {
  kModule,  // ".clm": a module file (module_file.h), written by the compile cache
  kPlan,    // ".clp": a keyed record (record.h) of the torch backend's graph plan
};

/// "module", "plan": a kind's name in the C API and in keyed records.
std::string_view StoreKindName(StoreKind kind);
/// The kind named `name`, or nullopt.
std::optional<StoreKind> StoreKindNamed(std::string_view name);

/// The store's key of `text`: its SHA-256 as 64 lower-case hex digits.
std::string StoreKey(std::string_view text);
/// Whether `key` is a key of the store (64 lower-case hex digits): nothing else names an entry.
bool IsStoreKey(std::string_view key);

/// Why a Read or Get found no entry, by its status's code.
enum class StoreMiss {
  kAbsent = 1,   // NotFound: no entry (or another process removed it meanwhile)
  kDamaged = 2,  // any other code: it cannot be read whole, or does not check
  kRefused = 3,  // FailedPrecondition: not a regular file (left as it is), or not a usable store
};
StoreMiss MissOf(const absl::Status& status);

class Store {
 public:
  /// The store in `dir`, which is made (mode 0700) where missing; refused, with a message naming
  /// the directory (and its owner and mode), where it cannot be made, or another user owns it, or
  /// its group or others can write it.
  static absl::StatusOr<Store> Open(const std::string& dir);
  /// The store in `dir` as Open found it before (neither made nor checked again).
  explicit Store(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  /// <dir>/<key><suffix>.
  std::string Path(StoreKind kind, std::string_view key) const;

  /// The bytes of the entry: NotFound, FailedPrecondition (not a regular file), or another
  /// error where it cannot be read or holds more than `max_bytes`.
  absl::StatusOr<std::string> Read(StoreKind kind, std::string_view key,
                                   uint64_t max_bytes = std::numeric_limits<uint64_t>::max()) const;
  /// Writes the entry atomically; refused (FailedPrecondition, naming the path) where its path
  /// holds what is not a regular file that is empty or starts with `format`'s magic.
  absl::Status Write(StoreKind kind, std::string_view key, std::string_view bytes,
                     const RecordFormat& format) const;
  /// Removes the entry where it is a regular file.
  void Remove(StoreKind kind, std::string_view key) const;
  /// Marks the entry used now (eviction removes the least recently used first).
  void Touch(StoreKind kind, std::string_view key) const;

  /// The payload of the keyed record (record.h) of `kind` under `key`, marked used; else the
  /// status of a miss (MissOf): a damaged record, or one of another kind or key, is removed.
  absl::StatusOr<std::string> Get(StoreKind kind, std::string_view key) const;
  /// Writes `payload` as the keyed record of `kind` under `key` (Write's rules).
  absl::Status Put(StoreKind kind, std::string_view key, std::string_view payload) const;

  /// Removes the least recently used entries until those left hold at most `cap_bytes`, the
  /// entry at `keep` last of all, and the locks and temporary files of writers that died (an
  /// hour old). Only the store's own regular files count or go. Returns the entries removed.
  int Evict(uint64_t cap_bytes, const std::string& keep) const;

 private:
  std::string dir_;
};

/// The lock of `key` in a store, held while a process does the key's work (a compile and its
/// store): a process or thread after the same key waits for the holder. An advisory lock (flock)
/// on <dir>/<key>.lock, which the holder's death releases too; a wait ends after `max_wait_ms`
/// (a holder stopped in a debugger, say), and then the work runs as if the lock were held: the
/// entry's atomic write keeps either result whole. Without a lock file (a read-only directory)
/// nothing waits. In one process, a thread must not take a key it holds already. `on_wait`, where
/// given, is called once as the wait begins (a counter others may watch meanwhile).
class StoreLock {
 public:
  StoreLock(const std::string& dir, std::string_view key, int max_wait_ms = 120000,
            const std::function<void()>& on_wait = {});
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

  /// Whether another holder was waited for.
  bool waited() const { return waited_; }
  /// Whether the lock is held (not after a wait that timed out, or without a lock file).
  bool held() const { return held_; }
  /// <dir>/<key>.lock.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool held_ = false, waited_ = false;
};

}  // namespace cinn_like
