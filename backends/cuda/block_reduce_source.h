/// \file The CUDA device helpers behind the block-reduce intrinsics of LowerThreadReduce,
/// printed once at the top of a translation unit that calls them.
#pragma once

#include "ir/intrinsics.h"

namespace cinn_like::backends {

/// CUDA C defining `T cinn_like_block_reduce_{sum,max,min,prod}(T partial)` for any scalar T that
/// `__shfl_xor_sync` takes (int32/64, uint32/64, float, double). Each reduces over threadIdx.x
/// separately for every (threadIdx.y, threadIdx.z) row and returns the row's total to every
/// thread: a masked butterfly inside the warp when blockDim.x is a power of two up to 32; warp
/// reduces, per-warp partials in `__shared__` memory and a final warp reduce when blockDim.x is
/// a multiple of 32 (up to 1024); a tree in shared memory otherwise. Every thread of the block
/// must call it (it synchronizes the warp or the block first, which also makes earlier global
/// stores of the block visible).
const char* BlockReduceSource();

/// The helper of BlockReduceSource that a block-reduce intrinsic calls
/// ("cinn_like_block_reduce_sum" for block_reduce_sum); nullptr for other intrinsics.
const char* BlockReduceHelperName(ir::IntrinsicOp op);

}  // namespace cinn_like::backends
