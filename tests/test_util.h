/// \file Test helpers: host tensors that own their storage and expose a DLTensor, and
/// random data that is never all zeros.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <random>
#include <vector>

namespace cinn_like::testing {

/// A dense row-major CPU tensor of T that owns its storage.
template <typename T>
class HostTensor {
 public:
  explicit HostTensor(std::vector<int64_t> shape, DLDataType dtype = DefaultDType())
      : shape_(std::move(shape)) {
    int64_t n = 1;
    for (auto d : shape_) n *= d;
    data_.resize(n);
    tensor_.data = data_.data();
    tensor_.device = {kDLCPU, 0};
    tensor_.ndim = static_cast<int32_t>(shape_.size());
    tensor_.dtype = dtype;
    tensor_.shape = shape_.data();
    tensor_.strides = nullptr;
    tensor_.byte_offset = 0;
  }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  static DLDataType DefaultDType() {
    if constexpr (std::is_floating_point_v<T>) {
      return {kDLFloat, static_cast<uint8_t>(8 * sizeof(T)), 1};
    } else if constexpr (std::is_signed_v<T>) {
      return {kDLInt, static_cast<uint8_t>(8 * sizeof(T)), 1};
    } else {
      return {kDLUInt, static_cast<uint8_t>(8 * sizeof(T)), 1};
    }
  }

  DLTensor* dl() { return &tensor_; }
  std::vector<T>& data() { return data_; }
  const std::vector<T>& data() const { return data_; }
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  T& operator[](int64_t i) { return data_[i]; }
  const std::vector<int64_t>& shape() const { return shape_; }

  /// Uniform values in [lo, hi) from a fresh seed each call (reported on failure by the
  /// caller through Seed()).
  void FillRandom(T lo = T(-1), T hi = T(1)) {
    std::mt19937_64 rng(NextSeed());
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<double> dist(lo, hi);
      for (auto& v : data_) v = static_cast<T>(dist(rng));
    } else {
      std::uniform_int_distribution<int64_t> dist(lo, hi);
      for (auto& v : data_) v = static_cast<T>(dist(rng));
    }
  }
  /// Fills with a value no correct kernel writes (a poison to catch unwritten outputs).
  void Poison() {
    for (auto& v : data_) v = static_cast<T>(-12345);
  }

 private:
  static uint64_t NextSeed() {
    static std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  std::vector<int64_t> shape_;
  std::vector<T> data_;
  DLTensor tensor_{};
};

/// A float32 DLTensor over memory the caller owns (on `device`, the CPU by default), `shape`
/// kept alive by the caller: views into one buffer, for the tests of arguments that overlap or
/// lie about their sizes, and device buffers for the benchmarks.
inline DLTensor FloatView(void* data, std::vector<int64_t>& shape, DLDeviceType device = kDLCPU) {
  DLTensor t{};
  t.data = data;
  t.device = {device, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  return t;
}

}  // namespace cinn_like::testing
