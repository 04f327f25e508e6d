/// \file Little-endian integers and sized byte strings, written to and read from the binary
/// files cinn_like keeps (module files, cache entries, prebuilt kernels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cinn_like::runtime {

inline void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// A u64 length, then the bytes.
inline void PutBytes(std::string* out, std::string_view bytes) {
  PutU64(out, bytes.size());
  out->append(bytes);
}

/// Reads from the front of the bytes, refusing to read past their end (each read returns
/// false there and reads nothing).
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  bool U32(uint32_t* v) {
    uint64_t wide = 0;
    if (!Raw(4, &wide)) return false;
    *v = static_cast<uint32_t>(wide);
    return true;
  }
  bool U64(uint64_t* v) { return Raw(8, v); }
  /// A u64 length, then that many bytes.
  bool Bytes(std::string* out) {
    uint64_t n = 0;
    if (!U64(&n)) return false;
    return Take(n, out);
  }
  /// The next `n` bytes.
  bool Take(uint64_t n, std::string* out) {
    if (n > bytes_.size() - pos_) return false;
    out->assign(bytes_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  bool Raw(size_t n, uint64_t* v) {
    if (bytes_.size() - pos_ < n) return false;
    *v = 0;
    for (size_t i = 0; i < n; ++i) {
      *v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += n;
    return true;
  }
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace cinn_like::runtime
