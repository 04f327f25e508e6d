/// \file HostTensor: a concrete tensor of the reference interpreter. Every element is kept as
/// a double already rounded to the tensor's dtype (hlir/dtype.h RoundToDType), so the
/// interpreter computes each op in double ("wide accumulation") and stores as the dtype would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlir/dtype.h"

namespace cinn_like::hlir {

struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<double> data;  // row-major

  HostTensor() = default;
  HostTensor(DType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(n, 0.0);
  }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  int rank() const { return static_cast<int>(shape.size()); }
  /// "float32[2, 3]"
  std::string Describe() const;
};

/// Row-major strides of `shape` (in elements).
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape);

/// The flat index into a tensor of shape `in` that numpy broadcasting reads for the multi-index
/// `out_index` of the broadcast result (trailing dims aligned, size-1 dims pinned to 0).
int64_t BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out_index);

/// Calls fn(multi_index) for every index of `shape`, in row-major order.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& shape, Fn&& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(static_cast<const std::vector<int64_t>&>(idx));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace cinn_like::hlir
