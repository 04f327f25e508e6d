/// \file The block-reduce helpers as CUDA C text.
#include "backends/cuda/block_reduce_source.h"

namespace cinn_like::backends {

const char* BlockReduceSource() {
  return R"cuda(// Cross-thread reductions over threadIdx.x, one per row of threads (threadIdx.y, z).
struct cinn_like_sum_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
// max and min keep a NaN, as the reductions' own combine (maximum, minimum) does.
template <typename T>
__device__ __forceinline__ bool cinn_like_is_nan(T v) { return static_cast<float>(v) != static_cast<float>(v); }
__device__ __forceinline__ bool cinn_like_is_nan(double v) { return v != v; }
struct cinn_like_max_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return cinn_like_is_nan(a) ? a : cinn_like_is_nan(b) ? b : max(a, b);
  }
};
struct cinn_like_min_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return cinn_like_is_nan(a) ? a : cinn_like_is_nan(b) ? b : min(a, b);
  }
};
struct cinn_like_prod_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a * b; }
};

// kN: blockDim.x where the kernel's launch makes it a constant (0: read at run time). A constant
// leaves one of the three ways below to compile: about half of NVRTC's time on a reduction.
template <int kN, typename T, typename Op>
__device__ __forceinline__ T cinn_like_block_reduce(T v, Op op) {
  const int n = kN > 0 ? kN : static_cast<int>(blockDim.x);
  const int tid = threadIdx.x + n * (threadIdx.y + blockDim.y * threadIdx.z);
  if (n <= 32 && (n & (n - 1)) == 0) {
    // Each row is an aligned group of n lanes of one warp: a butterfly inside the group. The
    // mask names the lanes this (possibly partial) warp has.
    const int total = n * blockDim.y * blockDim.z;
    const int lanes = min(32, total - (tid & ~31));
    const unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    __syncwarp(mask);
    for (int offset = n >> 1; offset > 0; offset >>= 1) {
      v = op(v, static_cast<T>(__shfl_xor_sync(mask, v, offset, n)));  // int8: shuffles are int
    }
    return v;
  }
  const int row = tid / n;
  if (n % 32 == 0) {
    // Whole warps per row: reduce each warp, then the row's first warp combines its warps.
    __shared__ T warp_partials[32];
    __shared__ T row_totals[32];
    const int warps = n >> 5;
    const int lane = threadIdx.x & 31;
    __syncthreads();
    for (int offset = 16; offset > 0; offset >>= 1) {
      v = op(v, static_cast<T>(__shfl_xor_sync(0xffffffffu, v, offset)));
    }
    if (lane == 0) warp_partials[tid >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
      T p = warp_partials[row * warps + (lane < warps ? lane : 0)];
      for (int offset = 16; offset > 0; offset >>= 1) {
        T other = __shfl_down_sync(0xffffffffu, p, offset);
        if (lane + offset < warps) p = op(p, other);
      }
      if (lane == 0) row_totals[row] = p;
    }
    __syncthreads();
    return row_totals[row];
  }
  // Rows that are not whole warps: a tree in shared memory, lane x adding lane x + s.
  __shared__ T values[1024];
  __syncthreads();
  values[tid] = v;
  __syncthreads();
  int s = 1;
  while (s < n) s <<= 1;
  for (s >>= 1; s > 0; s >>= 1) {
    if (threadIdx.x < s && threadIdx.x + s < n) values[tid] = op(values[tid], values[tid + s]);
    __syncthreads();
  }
  return values[tid - threadIdx.x];
}

template <int N = 0, typename T> __device__ __forceinline__ T cinn_like_block_reduce_sum(T v) {
  return cinn_like_block_reduce<N>(v, cinn_like_sum_op());
}
template <int N = 0, typename T> __device__ __forceinline__ T cinn_like_block_reduce_max(T v) {
  return cinn_like_block_reduce<N>(v, cinn_like_max_op());
}
template <int N = 0, typename T> __device__ __forceinline__ T cinn_like_block_reduce_min(T v) {
  return cinn_like_block_reduce<N>(v, cinn_like_min_op());
}
template <int N = 0, typename T> __device__ __forceinline__ T cinn_like_block_reduce_prod(T v) {
  return cinn_like_block_reduce<N>(v, cinn_like_prod_op());
}

)cuda";
}

const char* BlockReduceHelperName(ir::IntrinsicOp op) {
  // In list order: sum, max, min, prod.
  static constexpr const char* kHelpers[] = {
      "cinn_like_block_reduce_sum", "cinn_like_block_reduce_max", "cinn_like_block_reduce_min",
      "cinn_like_block_reduce_prod"};
  if (!ir::IsBlockReduce(op)) return nullptr;
  return kHelpers[static_cast<int>(op) - static_cast<int>(ir::IntrinsicOp::kBlockReduceSum)];
}

}  // namespace cinn_like::backends
