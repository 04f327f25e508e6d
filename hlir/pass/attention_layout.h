/// \file Attention reading and writing its operands where they lie (hlir/ops/attention.h:
/// AttentionLayout), as PyTorch's and FlashAttention's kernels take strided operands.
///
/// Hugging Face's attention layers project the tokens to [B, S, H * D], view them as
/// [B, S, H, D] and transpose to [B, H, S, D] for the attention; its output is transposed back
/// to [B, S, H, D] and viewed as [B, S, H * D] for the output projection. Compiled as written,
/// each transpose is a copy kernel: four a layer (q, k, v and the output), each reading and
/// writing a whole activation. Grouped-query attention adds HF's repeat_kv: k and v of Hkv
/// heads expanded to H (reshape to [B, Hkv, 1, S, D], broadcast_to [B, Hkv, H / Hkv, S, D],
/// reshape to [B, H, S, D]), a copy H / Hkv times the size of its input, where the kernel reads
/// head h's keys from head h / (H / Hkv) itself.
///
/// Here an attention node's operand, in this order,
///   - transpose(x, t) whose perm keeps the head dim last, read by nothing else, is read from x
///     (its perm composed with t);
///   - a view of whole heads of a wider value's last axis (GPT-2's q, k and v, sliced from its
///     fused [B, S, 3 H D] projection and viewed [B, S, H, D]), read by nothing else, is read
///     in that value (viewed [B, S, 3 H, D], with q_heads, k_heads or v_heads);
///   - repeat_kv's expansion of a [B, Hkv, S, D] value (read by nothing else) is that value:
///     the reshape dropping its axis of 1 (a view), or, where the value is a transpose of a
///     rank-5 tensor with that axis of 1 (HF's value projection viewed and transposed), the
///     transpose of the rank-4 view, read as above;
/// and its output read by one transpose alone, whose perm keeps the head dim last, is written
/// transposed (out_perm), that transpose's readers reading it. k and v are unrepeated together
/// or not at all (one Hkv for both); a perm composed with its inverse is dropped.
/// attention_grad nodes are not changed (a training step's transposes are read by the backward
/// too, and stay).
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// The graph with each attention node reading and writing its operands where they lie (the
/// rules above); every other node copied as it is (dead-code elimination removes the copies no
/// one reads any more).
absl::StatusOr<Graph> FoldLayoutsIntoAttention(const Graph& graph);

}  // namespace cinn_like::hlir
