/// \file Whole files for the caches and saved modules: read at once (regular files only, bounded
/// by their size), written atomically over nothing but a regular file of their own format,
/// directories checked private; and the FNV-1a fingerprint (module files and cache keys use
/// SHA-256).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cinn_like::runtime {

/// FNV-1a, 64 bits: the same bytes give the same value in every process and build. Not a
/// digest: module files and cache keys use Sha256 (runtime/sha256.h).
uint64_t Fnv1a64(std::string_view bytes);
/// Fnv1a64 as 16 hex digits.
std::string Fingerprint(std::string_view text);

/// The path of the shared library (or program) holding this code, "" when the loader cannot
/// say: what sits next to it (prebuilt kernels) and what identifies a build (cache keys).
std::string ThisLibraryPath();

/// The bytes of the regular file at `path` (a link to one is followed), read up to the size it
/// had when opened: a FIFO, a device, a directory or a file larger than `max_bytes` is refused
/// without reading (and without waiting for a FIFO's writer). The error, "cannot read <what>
/// <path>: <why>", names the path (`what` says what it should be: "the module file").
absl::StatusOr<std::string> ReadRegularFile(
    const std::string& path, std::string_view what = {},
    uint64_t max_bytes = std::numeric_limits<uint64_t>::max());

/// ReadRegularFile's bytes, or nullopt where it fails.
std::optional<std::string> ReadWholeFile(const std::string& path);

/// Whether a file of the format `format` (say "a cinn_like module file"), whose files start with
/// `magic`, may be written at `path`: nothing is there, or a regular file that is empty or starts
/// with `magic` (any regular file when `magic` is empty). A symbolic link, a directory, a device,
/// a FIFO or a socket is refused, and so is a file of another format; the error names the path.
absl::Status CheckReplaceable(const std::string& path, std::string_view magic = {},
                              std::string_view format = {});

/// Writes `bytes` to a temporary file next to `path` (its name unique to this process and call,
/// created anew, never through a link) and renames it over `path`: a reader sees the old file
/// or the whole new one, never a part, and processes writing the same path at once leave one
/// whole file. Refused first where CheckReplaceable(path, magic, format) refuses. The error
/// names the path and the system's reason.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes,
                                 std::string_view magic = {}, std::string_view format = {});

/// Writes `bytes` to `path` in place (truncated first), refusing to follow a symbolic link there
/// (O_NOFOLLOW) or to write anything but a regular file: for debug dumps.
absl::Status WriteFileNoFollow(const std::string& path, std::string_view bytes);

/// Whether `dir` (an existing directory; a link to one is followed where this user owns the
/// link) is this user's alone to change: owned by the effective user and not writable by its
/// group or others. What caches load code from and what dumps write into must be. The error
/// names the directory, its owner and mode.
absl::Status CheckPrivateDirectory(const std::string& dir);

}  // namespace cinn_like::runtime
