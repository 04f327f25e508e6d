/// \file The one frame of the files cinn_like keeps to load again (module files, the persistent
/// store's records) and the store's keyed records: how their bytes are sealed with a checksum
/// and checked before anything inside them is read.
///
/// A record (integers little-endian):
///   8 bytes        its format's magic ("CLMODULE", "CLRECORD")
///   u32            its format's version
///   body           the format's own bytes
///   32 bytes       SHA-256 (runtime/sha256.h) of every byte before it
/// The digest finds damage and truncation, not forgery: whoever can write a file can seal it
/// again, which is why the store's directory must be its user's alone (store.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace cinn_like {

/// What a kind of record is called and what it starts with.
struct RecordFormat {
  std::string_view magic;   // 8 bytes
  uint32_t version;         // the version this library writes and reads
  std::string_view name;    // "module file": "<origin> has module file format version 2"
  std::string_view noun;    // "a cinn_like module file": "<origin> is not a cinn_like module file"
  std::string_view remedy;  // what a reader of another version does about it
};

/// `body` framed as a record of `format`: magic, version, body, digest.
std::string SealRecord(const RecordFormat& format, std::string_view body);

/// The body of the record `bytes`, checked in this order: the magic (else InvalidArgument, "is
/// not <noun>"), the version (FailedPrecondition naming both versions and the remedy), the
/// digest (DataLoss, "is damaged: ..."). `origin` (a path, "cache entry <path>") starts each
/// message. The view points into `bytes`.
absl::StatusOr<std::string_view> OpenRecord(const RecordFormat& format, std::string_view bytes,
                                            const std::string& origin);

/// The store's keyed records (store.h, and through the C API the torch backend's graph plans):
/// a record whose body holds its kind's name, its key and the caller's payload, so that a
/// record is used only as what and under the key it was written for.
inline constexpr RecordFormat kKeyedRecord = {"CLRECORD", 1, "record", "a cinn_like record",
                                              "it is written again"};

/// The keyed record of `payload` stored as kind `kind` ("plan") under `key`.
std::string EncodeKeyedRecord(std::string_view kind, std::string_view key,
                              std::string_view payload);

/// The payload of the keyed record `bytes`, after OpenRecord's checks and that it was written
/// as `kind` under `key` (else DataLoss, naming what it holds instead).
absl::StatusOr<std::string> DecodeKeyedRecord(std::string_view bytes, std::string_view kind,
                                              std::string_view key, const std::string& origin);

}  // namespace cinn_like
