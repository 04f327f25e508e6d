/// \file The fused attention backward kernel as CUDA C text: the template (printed once, after
/// the forward's, whose helpers it uses) and one `extern "C" __global__` instance per kernel
/// name the host code launches (hlir/ops/attention_grad_kernel.cc makes the launch).
///
/// A block of 128 threads owns BN keys of one (batch, key/value head): it keeps the key and
/// value tiles in shared memory and dK, dV in registers, and walks every query head of its
/// group and every query tile of BM rows. For each, it recomputes the probabilities P =
/// exp(scale q kᵀ + mask - logsumexp) and dP = dO vᵀ, reads Di = rowsum(dO ∘ O) from O and dO,
/// forms dS = P ∘ (dP ∘ W - Di) (W dropout's weights, 1 without it), writes dS · scale to the
/// [B, H, Lq, Lk] output `dqk` (the gradient of the products q kᵀ, of which dQ = dqk k is a
/// matmul the graph runs after) and accumulates dV += (P ∘ W)ᵀ dO, dK += dSᵀ q. Everything is
/// float32 in shared memory and registers; float16 and bfloat16 are converted when loaded and
/// rounded once when stored. The [Lq, Lk] matrices P and dP never reach global memory; dqk does
/// (one write), so that dQ needs no atomics and the kernel is deterministic.
///
/// Arguments, in order: q, k, v, out, dout (element T), logsumexp (float), mask (any pointer,
/// unread without a mask), dk, dv, dqk (T); int B, H, Hkv, Lq, Lk, D, Dv; float scale; int
/// causal; int64 mask strides along B, H, Lq, Lk; dropout's seed and stream (int64 pointers)
/// and 1 - p (float), unread without dropout. Launch: grid (ceil(Lk / BN), B * Hkv), block 128,
/// no dynamic shared memory.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "ir/attention_kernel_spec.h"

namespace cinn_like::backends {

/// The template (in namespace cinn_like_attention, after AttentionKernelTemplate()), and its
/// tensor-core form (attention_grad_mma_source.cc; after AttentionTileTemplate() and
/// AttentionMmaTemplate(), whose fragment and copy helpers it uses).
const char* AttentionGradTemplate();
const char* AttentionGradMmaTemplate();

/// The instance of backward kernel `spec` (its name's form is ir/attention_kernel_spec.h's)
/// with dtype float32,
/// float16 or bfloat16, mask none, bool or a float dtype, D 32, 64 or 128 (the padded head
/// dim), BN 16 or 32 and BM 16, 32 or 64 (a multiple of 128 / BN), the tiles within 48 KiB of
/// shared memory. `_tc`: tensor cores (float16 or bfloat16, D up to 64, BM and BN 64) on sm_80
/// and later, the CUDA-core form on each 32-key half before. An error names the part of the
/// name that is none of those.
absl::StatusOr<std::string> AttentionGradKernelInstance(const ir::AttentionKernelSpec& spec);

}  // namespace cinn_like::backends
