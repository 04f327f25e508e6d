/// \file The bounds check of user indices (gather, index_add, one_hot and the torch backend's
/// check_index), shared by the CPU and CUDA runtime functions (cinn_like_check_indices,
/// cinn_like_cuda_check_indices).
#pragma once

#include <cstdint>

namespace cinn_like::runtime {

/// 0 when each of the `count` int32 or int64 (`bits`) indices at `host` is in [low, high);
/// otherwise 1, with the last error naming `what`, the first bad value and its position.
int CheckIndices(const void* host, int64_t count, int64_t bits, int64_t low, int64_t high,
                 const char* what);

}  // namespace cinn_like::runtime
