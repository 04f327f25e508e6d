/// \file SHA-256 (FIPS 180-4), the one digest cinn_like names and checks its stored files with:
/// module files, cache entries and their keys (the Python plan cache uses hashlib's, the same).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cinn_like::runtime {

using Sha256Digest = std::array<uint8_t, 32>;

/// The SHA-256 digest of `bytes`.
Sha256Digest Sha256(std::string_view bytes);

/// The digest as 64 lower-case hex digits, as Python's hashlib.sha256(...).hexdigest().
std::string Sha256Hex(std::string_view bytes);

}  // namespace cinn_like::runtime
