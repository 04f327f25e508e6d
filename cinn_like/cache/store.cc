/// \file The persistent store's names, reads, atomic writes, keyed records, eviction and locks.
#include "cinn_like/cache/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/files.h"
#include "runtime/sha256.h"

namespace cinn_like {
namespace {

namespace fs = std::filesystem;

/// Each kind's name (the C API's, and keyed records') and its entries' suffix.
struct KindInfo {
  StoreKind kind;
  std::string_view name, suffix;
};
constexpr KindInfo kKinds[] = {{StoreKind::kModule, "module", ".clm"},
                               {StoreKind::kPlan, "plan", ".clp"}};
constexpr std::string_view kLockSuffix = ".lock";
constexpr std::string_view kTmpInfix = ".tmp.";

std::string_view SuffixOf(StoreKind kind) {
  for (const KindInfo& k : kKinds) {
    if (k.kind == kind) return k.suffix;
  }
  return "";
}

/// Whether `text` is `n` lower-case hex digits.
bool IsHex(std::string_view text, size_t n) {
  return text.size() == n && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

/// Whether `text` is one or more decimal digits.
bool IsNumber(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Whether `name` starts with a key the store makes or made, then a dot: 64 hex digits (a
/// SHA-256), 32 (the plan names of before the store, a SHA-256 cut) or 16 (the FNV-1a keys of
/// module file version 2 and before); `*rest` is what follows.
bool StartsWithKey(std::string_view name, std::string_view* rest) {
  for (size_t n : {size_t{64}, size_t{32}, size_t{16}}) {
    if (name.size() > n && IsHex(name.substr(0, n), n) && name[n] == '.') {
      *rest = name.substr(n);
      return true;
    }
  }
  return false;
}

/// What a file of the store's directory is, by its name: the store's own are <key><suffix> of
/// a kind, <key>.lock and the temporary files <key><suffix>.tmp.<pid>.<serial>; anything else
/// is not the store's and is never removed or counted.
enum class OwnFile { kNotOurs, kEntry, kLock, kTemporary };
OwnFile ClassifyName(std::string_view name) {
  std::string_view rest;
  if (!StartsWithKey(name, &rest)) return OwnFile::kNotOurs;
  if (rest == kLockSuffix) return OwnFile::kLock;
  for (const KindInfo& k : kKinds) {
    const std::string_view suffix = k.suffix;
    if (rest == suffix) return OwnFile::kEntry;
    const std::string prefix = absl::StrCat(std::string(suffix), std::string(kTmpInfix));
    if (rest.substr(0, prefix.size()) != prefix) continue;
    const std::string_view serial = rest.substr(prefix.size());
    const size_t dot = serial.find('.');
    if (dot != std::string_view::npos && IsNumber(serial.substr(0, dot)) &&
        IsNumber(serial.substr(dot + 1))) {
      return OwnFile::kTemporary;
    }
  }
  return OwnFile::kNotOurs;
}

/// Removes the store's file at `path`: only a regular file (what the store writes).
void RemoveRegular(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  std::error_code ec;
  fs::remove(path, ec);  // another process may have removed it first
}

}  // namespace

std::string_view StoreKindName(StoreKind kind) {
  for (const KindInfo& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "";
}

std::optional<StoreKind> StoreKindNamed(std::string_view name) {
  for (const KindInfo& k : kKinds) {
    if (k.name == name) return k.kind;
  }
  return std::nullopt;
}

std::string StoreKey(std::string_view text) { return runtime::Sha256Hex(text); }

bool IsStoreKey(std::string_view key) { return IsHex(key, 64); }

StoreMiss MissOf(const absl::Status& status) {
  if (absl::IsNotFound(status)) return StoreMiss::kAbsent;
  if (absl::IsFailedPrecondition(status)) return StoreMiss::kRefused;
  return StoreMiss::kDamaged;
}

absl::StatusOr<Store> Store::Open(const std::string& dir) {
  std::error_code ec;
  // Entries are code that processes run: the directory is its user's alone.
  if (fs::create_directories(dir, ec) && !ec) {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot create ", dir, " (", ec.message(), ")"));
  }
  if (absl::Status usable = runtime::CheckPrivateDirectory(dir); !usable.ok()) return usable;
  return Store(dir);
}

std::string Store::Path(StoreKind kind, std::string_view key) const {
  return (fs::path(dir_) / absl::StrCat(std::string(key), std::string(SuffixOf(kind)))).string();
}

absl::StatusOr<std::string> Store::Read(StoreKind kind, std::string_view key,
                                        uint64_t max_bytes) const {
  const std::string path = Path(kind, key);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("no entry ", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a regular file, so not an entry of this store"));
  }
  auto bytes = runtime::ReadRegularFile(path, "store entry", max_bytes);
  // InvalidArgument: it became something else meanwhile, or is too large (damaged).
  if (!bytes.ok() && !absl::IsNotFound(bytes.status())) {
    return absl::DataLossError(bytes.status().message());
  }
  return bytes;
}

absl::Status Store::Write(StoreKind kind, std::string_view key, std::string_view bytes,
                          const RecordFormat& format) const {
  return runtime::WriteFileAtomically(Path(kind, key), bytes, format.magic, format.noun);
}

void Store::Remove(StoreKind kind, std::string_view key) const { RemoveRegular(Path(kind, key)); }

void Store::Touch(StoreKind kind, std::string_view key) const {
  // Now, on the entry itself: never on what a link put at its path points to.
  utimensat(AT_FDCWD, Path(kind, key).c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

absl::StatusOr<std::string> Store::Get(StoreKind kind, std::string_view key) const {
  auto bytes = Read(kind, key);
  if (!bytes.ok()) {
    if (MissOf(bytes.status()) == StoreMiss::kDamaged) Remove(kind, key);
    return bytes.status();
  }
  auto payload = DecodeKeyedRecord(*bytes, StoreKindName(kind), key, Path(kind, key));
  if (!payload.ok()) {
    Remove(kind, key);
    // Whatever OpenRecord said (another magic or version too), the entry is no use.
    return absl::DataLossError(payload.status().message());
  }
  Touch(kind, key);
  return payload;
}

absl::Status Store::Put(StoreKind kind, std::string_view key, std::string_view payload) const {
  return Write(kind, key, EncodeKeyedRecord(StoreKindName(kind), key, payload), kKeyedRecord);
}

int Store::Evict(uint64_t cap_bytes, const std::string& keep) const {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uintmax_t size;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const OwnFile kind = ClassifyName(it->path().filename().string());
    std::error_code e;
    if (kind == OwnFile::kNotOurs || !it->is_regular_file(e) || it->is_symlink(e)) continue;
    if (kind == OwnFile::kTemporary || kind == OwnFile::kLock) {
      // A temporary file or a lock an hour old belongs to a writer that died.
      const auto age = fs::file_time_type::clock::now() - fs::last_write_time(it->path(), e);
      if (!e && age > std::chrono::hours(1)) RemoveRegular(it->path().string());
      continue;
    }
    std::error_code e1, e2;
    const uintmax_t size = fs::file_size(it->path(), e1);
    const fs::file_time_type used = fs::last_write_time(it->path(), e2);
    if (e1 || e2) continue;  // removed meanwhile
    entries.push_back({it->path(), used, size});
    total += size;
  }
  if (total <= cap_bytes) return 0;
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    const bool a_kept = a.path == keep, b_kept = b.path == keep;
    if (a_kept != b_kept) return b_kept;
    return a.used < b.used;
  });
  int removed = 0;
  for (const Entry& e : entries) {
    if (total <= cap_bytes) break;
    RemoveRegular(e.path.string());
    total -= e.size;
    ++removed;
  }
  return removed;
}

StoreLock::StoreLock(const std::string& dir, std::string_view key, int max_wait_ms,
                     const std::function<void()>& on_wait)
    : path_((fs::path(dir) / absl::StrCat(std::string(key), std::string(kLockSuffix))).string()) {
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
    if (errno != EWOULDBLOCK && errno != EINTR) break;  // no locks here: work unlocked
    if (!waited_ && on_wait) on_wait();
    waited_ = true;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

StoreLock::~StoreLock() {
  if (fd_ < 0) return;
  // Removed while held: a process that opened it before gets this file's lock, sees that the
  // path no longer names it and opens the path again.
  if (held_) unlink(path_.c_str());
  close(fd_);  // releases the lock
}

}  // namespace cinn_like
