/// \file HostTensor helpers: description, strides, broadcast indexing.
#include "hlir/host_tensor.h"

#include "absl/strings/str_join.h"

namespace cinn_like::hlir {

std::string HostTensor::Describe() const {
  return std::string(DTypeName(dtype)) + "[" + absl::StrJoin(shape, ", ") + "]";
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
}

int64_t BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out_index) {
  size_t offset = out_index.size() - in.size();
  int64_t flat = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t i = in[d] == 1 ? 0 : out_index[d + offset];
    flat = flat * in[d] + i;
  }
  return flat;
}

}  // namespace cinn_like::hlir
