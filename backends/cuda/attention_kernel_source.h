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
/// pointers, one element each) and 1 - p (float), unread by an instance without dropout.
/// Launch: grid (ceil(Lq / BM), B * H), block 128, no dynamic shared memory.
///
/// Dropout (`_drop`): each probability p_ij of the online softmax is added to the row sum as
/// it is, and enters p v times 1 / (1 - p) where the Philox uniform of (seed, stream,
/// ((b H + h) Lq + i) Lk + j) is below 1 - p, else 0 (hlir/ops/attention.h).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cinn_like::backends {

/// Whether `kernel` is named as an attention kernel ("cinn_like_attention_...", the backward's
/// "cinn_like_attention_grad_..." included).
bool IsAttentionKernel(const std::string& kernel);

/// How a family of attention kernels is named: its prefix, what an error calls one, and the
/// grammar an error quotes.
struct AttentionNameForm {
  const char* prefix;
  const char* noun;
  const char* grammar;
};

/// The error "<noun> <kernel>: <why> (expected <grammar>)" of a name of `form`.
absl::Status AttentionNameError(const AttentionNameForm& form, const std::string& kernel,
                                const std::string& why);

/// A name <prefix><dtype>_<mask>_d<D>_q<BM>_k<BN>[_tc][_drop], read: its five parts as written
/// (for errors), the CUDA element type (float, __half, __nv_bfloat16), the mask's type
/// (cinn_like_attention::NoMask for "none", bool, or an element type), the numbers (-1 where a
/// part is not a tagged number; the caller checks them), `_tc` and `_drop`.
struct AttentionName {
  std::vector<std::string> parts;
  std::string element, mask;
  int d = -1, bm = -1, bn = -1;
  bool tensor_cores = false, dropout = false;
};
/// `kernel` read as a name of `form`; an AttentionNameError for a malformed name, an unknown
/// element or mask dtype.
absl::StatusOr<AttentionName> ReadAttentionName(const AttentionNameForm& form,
                                                const std::string& kernel);

/// The template (namespace cinn_like_attention), printed once before the instances, and its
/// tensor-core form (attention_mma_source.cc), printed after it.
const char* AttentionKernelTemplate();
const char* AttentionMmaTemplate();

/// The `extern "C" __global__` instance called `kernel`:
/// cinn_like_attention_<dtype>_<mask>_d<D>_q<BM>_k<BN>[_tc][_drop] with dtype float32, float16 or
/// bfloat16, mask none, bool, float32, float16 or bfloat16, D a multiple of 32 up to 256 (the
/// padded head dim), BN 16, 32 or 64 and BM a multiple of 128 / min(BN, 32) up to 128, the tiles
/// within 48 KiB of shared memory. `_tc`: tensor cores (BM and BN 64; D up to 128 for float16
/// and bfloat16, up to 64 for float32 as tf32 pairs) on sm_80 and later, 16-key tiles on CUDA
/// cores before. An error names the part of the name that is not one of those.
absl::StatusOr<std::string> AttentionKernelInstance(const std::string& kernel);

}  // namespace cinn_like::backends
