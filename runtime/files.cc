/// \file Whole-file reads, atomic writes (temporary file + rename) and FNV-1a.
#include "runtime/files.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace cinn_like::runtime {

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

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return bytes.str();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid(), ".", serial++);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", tmp, " (to write ", path, "): ", std::strerror(errno)));
  }
  // On disk before the rename: after a crash the path holds the old file or the new one.
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() &&
                       std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(tmp.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot write ", tmp, " (to write ", path, "): ", std::strerror(write_errno)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(tmp.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", tmp, " to ", path, ": ", std::strerror(rename_errno)));
  }
  return absl::OkStatus();
}

}  // namespace cinn_like::runtime
