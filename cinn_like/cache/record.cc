/// \file Sealing and checked opening of records; the store's keyed records.
#include "cinn_like/cache/record.h"

#include "absl/strings/str_cat.h"
#include "runtime/byte_io.h"
#include "runtime/sha256.h"

namespace cinn_like {
namespace {

constexpr size_t kDigestBytes = sizeof(runtime::Sha256Digest);
constexpr size_t kMagicBytes = 8;

}  // namespace

std::string SealRecord(const RecordFormat& format, std::string_view body) {
  std::string out(format.magic);
  runtime::PutU32(&out, format.version);
  out.append(body);
  const runtime::Sha256Digest digest = runtime::Sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

absl::StatusOr<std::string_view> OpenRecord(const RecordFormat& format, std::string_view bytes,
                                            const std::string& origin) {
  auto damaged = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(origin, " is damaged: ", what));
  };
  if (bytes.size() < kMagicBytes || bytes.substr(0, kMagicBytes) != format.magic) {
    return absl::InvalidArgumentError(absl::StrCat(origin, " is not ", std::string(format.noun),
                                                   " (no ", std::string(format.magic), " magic)"));
  }
  runtime::ByteReader in(bytes.substr(kMagicBytes));
  uint32_t version = 0;
  if (!in.U32(&version)) return damaged("it ends in its format version");
  if (version != format.version) {
    return absl::FailedPreconditionError(absl::StrCat(
        origin, " has ", std::string(format.name), " format version ", version,
        "; this cinn_like reads version ", format.version, " (", std::string(format.remedy), ")"));
  }
  const size_t head = kMagicBytes + 4;
  if (bytes.size() < head + kDigestBytes) return damaged("it is shorter than its digest");
  const size_t end = bytes.size() - kDigestBytes;
  const runtime::Sha256Digest digest = runtime::Sha256(bytes.substr(0, end));
  if (bytes.substr(end) !=
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size())) {
    return damaged("its SHA-256 checksum does not match (truncated or changed)");
  }
  return bytes.substr(head, end - head);
}

std::string EncodeKeyedRecord(std::string_view kind, std::string_view key,
                              std::string_view payload) {
  std::string body;
  runtime::PutBytes(&body, kind);
  runtime::PutBytes(&body, key);
  body.append(payload);
  return SealRecord(kKeyedRecord, body);
}

absl::StatusOr<std::string> DecodeKeyedRecord(std::string_view bytes, std::string_view kind,
                                              std::string_view key, const std::string& origin) {
  auto body = OpenRecord(kKeyedRecord, bytes, origin);
  if (!body.ok()) return body.status();
  runtime::ByteReader in(*body);
  std::string held_kind, held_key;
  if (!in.Bytes(&held_kind) || !in.Bytes(&held_key)) {
    return absl::DataLossError(
        absl::StrCat(origin, " is damaged: its kind or key runs past the end"));
  }
  if (held_kind != kind || held_key != key) {
    return absl::DataLossError(absl::StrCat(origin, " holds the ", held_kind, " record of key '",
                                            held_key, "', not the ", std::string(kind),
                                            " record of its name"));
  }
  return std::string(body->substr(in.pos()));
}

}  // namespace cinn_like
