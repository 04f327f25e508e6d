/// \file FuzzInput: the fuzz targets' reader of libFuzzer's bytes as choices (a number in a
/// range, a pick from a list). Once the bytes run out every read is 0, so any input, however
/// short, makes a choice. Written here rather than taken from clang's FuzzedDataProvider so that
/// the targets also build as plain replay programs with gcc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace cinn_like::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// Little-endian bytes as an unsigned integer of `bytes` bytes (at most 8).
  uint64_t Bits(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    return v;
  }
  /// A number in [lo, hi] (lo <= hi), from as few bytes as the range needs.
  int64_t Range(int64_t lo, int64_t hi) {
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span == 0) return lo;
    int bytes = 1;
    while (bytes < 8 && (span >> (8 * bytes)) != 0) ++bytes;
    uint64_t v = Bits(bytes);
    if (span != UINT64_MAX) v %= span + 1;
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + v);
  }
  /// True about once in `n` reads (n >= 1); false once the bytes run out, so zeros (and the
  /// end of an input) mean "leave it as it is".
  bool OneIn(int n) { return Range(0, n - 1) == n - 1; }
  bool Bool() { return Byte() & 1; }
  /// Any double, from 8 bytes.
  double Double() {
    uint64_t b = Bits(8);
    double d;
    std::memcpy(&d, &b, sizeof(d));
    return d;
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Range(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace cinn_like::fuzz
