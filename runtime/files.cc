/// \file Whole-file reads and atomic writes that touch only regular files, private-directory
/// checks, and FNV-1a.
#include "runtime/files.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cinn_like::runtime {
namespace {

/// What a file that is not a regular one is, for messages.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

/// Closes a descriptor when it goes.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

/// Reads up to `n` bytes from `fd` into `out` (fewer at its end).
bool ReadUpTo(int fd, uint64_t n, std::string* out) {
  out->resize(n);
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = read(fd, out->data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) break;
    got += static_cast<uint64_t>(r);
  }
  out->resize(got);
  return true;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t w = write(fd, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

}  // namespace

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Fingerprint(std::string_view text) {
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(Fnv1a64(text)));
  return out;
}

std::string ThisLibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ThisLibraryPath), &info) == 0 || !info.dli_fname) return "";
  return info.dli_fname;
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, std::string_view what,
                                            uint64_t max_bytes) {
  const std::string cannot =
      absl::StrCat("cannot read ", std::string(what), what.empty() ? "" : " ", path, ": ");
  // O_NONBLOCK: opening a FIFO waits for no writer (it is refused below).
  Fd f{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) {
    const int e = errno;
    const std::string message = cannot + std::strerror(e);
    return e == ENOENT ? absl::NotFoundError(message) : absl::UnavailableError(message);
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0) return absl::UnavailableError(cannot + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(cannot, "it is ", KindOf(st.st_mode), ", not a regular file"));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(cannot, "it holds ", size, " bytes, more than the ", max_bytes, " allowed"));
  }
  const int flags = fcntl(f.fd, F_GETFL);
  if (flags >= 0) fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  // What the file held when opened, no more: one that grows meanwhile is read in part (and
  // fails its format's checks), never without end.
  std::string bytes;
  if (!ReadUpTo(f.fd, size, &bytes)) return absl::UnavailableError(cannot + std::strerror(errno));
  return bytes;
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  auto bytes = ReadRegularFile(path);
  if (!bytes.ok()) return std::nullopt;
  return *std::move(bytes);
}

absl::Status CheckReplaceable(const std::string& path, std::string_view magic,
                              std::string_view format) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("refusing to replace ", path, ": it is ",
                                                      KindOf(st.st_mode), ", not a regular file"));
  }
  if (magic.empty() || st.st_size == 0) return absl::OkStatus();
  Fd f{open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  std::string head;
  if (f.fd < 0 || !ReadUpTo(f.fd, magic.size(), &head)) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", path, " (to replace it): ", std::strerror(errno)));
  }
  if (head != magic) {
    return absl::FailedPreconditionError(
        absl::StrCat("refusing to overwrite ", path, ": it is not ",
                     format.empty() ? std::string("a file of this format") : std::string(format)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes,
                                 std::string_view magic, std::string_view format) {
  if (absl::Status replaceable = CheckReplaceable(path, magic, format); !replaceable.ok()) {
    return replaceable;
  }
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid(), ".", serial++);
  // A new file (O_EXCL): never one planted at the temporary name, nor through a link there.
  Fd f{open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)};
  if (f.fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", tmp, " (to write ", path, "): ", std::strerror(errno)));
  }
  // On disk before the rename: after a crash the path holds the old file or the new one.
  const bool written = WriteAll(f.fd, bytes) && fsync(f.fd) == 0;
  const int write_errno = errno;
  const bool closed = close(f.fd) == 0;
  f.fd = -1;
  if (!written || !closed) {
    unlink(tmp.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot write ", tmp, " (to write ", path, "): ", std::strerror(write_errno)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    unlink(tmp.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", tmp, " to ", path, ": ", std::strerror(rename_errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileNoFollow(const std::string& path, std::string_view bytes) {
  Fd f{open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666)};
  if (f.fd < 0) {
    const int e = errno;
    return absl::UnavailableError(absl::StrCat(
        "cannot write ", path, ": ",
        e == ELOOP ? "it is a symbolic link, which is not followed" : std::strerror(e)));
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", path, ": it is not a regular file"));
  }
  if (ftruncate(f.fd, 0) != 0 || !WriteAll(f.fd, bytes)) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status CheckPrivateDirectory(const std::string& dir) {
  const uid_t me = geteuid();
  struct stat link {
  }, st{};
  if (lstat(dir.c_str(), &link) != 0 || stat(dir.c_str(), &st) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot use ", dir, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot use ", dir, ": it is not a directory"));
  }
  if (S_ISLNK(link.st_mode) && link.st_uid != me) {
    return absl::PermissionDeniedError(absl::StrCat("refusing ", dir,
                                                    ": it is a symbolic link of user ", link.st_uid,
                                                    ", not of this user (", me, ")"));
  }
  if (st.st_uid != me) {
    return absl::PermissionDeniedError(absl::StrCat("refusing ", dir, ": it is owned by user ",
                                                    st.st_uid, ", not by this user (", me, ")"));
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "refusing %s: it is writable by %s (mode %04o); make it the user's alone (chmod go-w)", dir,
        (st.st_mode & S_IWOTH) ? "others" : "its group", st.st_mode & 07777));
  }
  return absl::OkStatus();
}

}  // namespace cinn_like::runtime
