/// \file The fused attention kernel (flash-attention style) as CUDA C text: a template printed
/// once in a device module that launches it, and one `extern "C" __global__` instance per
/// kernel name the host code launches (hlir/ops/attention_kernel.cc makes the launch).
///
/// A block of 128 threads computes BM query rows of one (batch, head): it keeps the query tile
/// in shared memory, walks the keys BN at a time (a key tile, then a value tile, in the same
/// shared buffer), keeps the scores of the tile in shared memory and the running row max and
/// row sum of the online softmax, and accumulates p v in registers; no [Lq, Lk] matrix is ever
/// in global memory. Everything is computed in float32 (float16 and bfloat16 are converted
/// when loaded and rounded once when stored). A causal block stops at its last row's key.
///
/// Arguments, in order: q, k, v (element T), mask (any pointer; unread without a mask), out
/// (T), logsumexp (float); int B, H, Hkv, Lq, Lk, D, Dv; float scale; int causal; int64 mask
/// strides along B, H, Lq, Lk (0 where it broadcasts); dropout's seed and stream (int64
/// pointers, one element each) and 1 - p (float), unread by an instance without dropout; the
/// int64 strides of the batch, head and row axes and the first element's offset of q, k, v and
/// out in turn (each operand's head dim contiguous: [B, H, L, D] row-major, or [B, L, H, D] read
/// in place; the logsumexp is [B, H, Lq] row-major). Launch: grid (ceil(Lq / BM), B * H),
/// block 128, no dynamic shared memory.
///
/// Dropout (`_drop`): each probability p_ij of the online softmax is added to the row sum as
/// it is, and enters p v times 1 / (1 - p) where the Philox uniform of (seed, stream,
/// ((b H + h) Lq + i) Lk + j) is below 1 - p, else 0 (hlir/ops/attention.h).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attention_kernel_spec.h"

namespace cinn_like::backends {

/// The CUDA types an instance of `spec` is printed with: the element (float, __half,
/// __nv_bfloat16) and the mask's (cinn_like_attention::NoMask for "none", bool, or an element
/// type).
struct AttentionCudaTypes {
  std::string element, mask;
};
AttentionCudaTypes AttentionTypes(const ir::AttentionKernelSpec& spec);

/// The template (namespace cinn_like_attention), printed once before the instances, then the
/// tensor-core tiles (attention_tile_source.cc) and forms (attention_mma_source.cc), in that
/// order.
const char* AttentionKernelTemplate();
const char* AttentionTileTemplate();
const char* AttentionMmaTemplate();

/// The `extern "C" __global__` instance of forward kernel `spec` (its name's form is
/// ir/attention_kernel_spec.h's) with dtype float32, float16 or
/// bfloat16, mask none, bool, float32, float16 or bfloat16, D a multiple of 32 up to 256 (the
/// padded head dim), BN 16, 32 or 64 and BM a multiple of 128 / min(BN, 32) up to 128, the tiles
/// within 48 KiB of shared memory. `_tc`: tensor cores (BM and BN 64; D up to 128 for float16
/// and bfloat16, up to 64 for float32 as tf32 pairs) on sm_80 and later, 16-key tiles on CUDA
/// cores before. An error names the part of the name that is not one of those.
absl::StatusOr<std::string> AttentionKernelInstance(const ir::AttentionKernelSpec& spec);

}  // namespace cinn_like::backends
