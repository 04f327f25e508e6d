/// \file Attention masks that the graph computes from no input, evaluated at compile time.
///
/// Hugging Face's models build their causal mask inside the traced graph: positions from
/// aranges, compared, combined with a packed-sequence test, then turned into a [B, 1, S, S] bool
/// or float (0 / -inf) tensor that attention reads. Compiled as it stands, that mask is a tensor
/// the fused attention kernel loads for every tile, where `causal` would let it skip every tile
/// above the diagonal and read nothing (H200, [8, 12, 512, 64]: float16 62 against 39 us, float32
/// 260 against 122). Here each mask of an attention or attention_grad node that depends on no
/// graph input is evaluated by the reference interpreter, and replaced where its effect is one
/// the attributes say exactly:
///   - it keeps every key the node's `causal` attribute keeps: the mask is dropped;
///   - with `causal`, it keeps exactly the keys j <= i of each row i: the mask is dropped and
///     `causal` set.
/// A bool mask keeps where true. A float mask keeps where 0 and drops where -inf or at most
/// -65504 (Hugging Face writes torch.finfo(dtype).min, or float16's in a bfloat16 mask); any
/// other value is an additive bias and the mask stays. Adding -65504 drops a key as -inf does
/// wherever its score is less than 64000 above its row's largest kept one (exp underflows to 0
/// below -104 in float32, -745 in float64), and a mask made causal keeps a key in every row: the
/// rule assumes no score is that far above the rest, as the models writing such masks do. A
/// mask that broadcasts over queries or keys is only dropped, never made causal. A mask the
/// reference interpreter cannot evaluate (an index out of range) stays.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// The most elements the values computing a mask (before its broadcasts) may have together to
/// be evaluated: the reference interpreter holds them in double (256 MiB at most), about 10 ns
/// an element. GPT-2's mask at batch 8 of 512 tokens takes some 10 million; at 2048 tokens it
/// stays a mask.
inline constexpr int64_t kMaxEvaluatedMaskElements = int64_t{1} << 25;

/// The graph with each constant attention mask that the rules above allow dropped (and the
/// node's `causal` attribute set where they say so); other nodes copied as they are. The
/// mask's computation stays, for dead-code elimination to remove where nothing else reads it.
absl::StatusOr<Graph> SimplifyConstantAttentionMasks(
    const Graph& graph, int64_t max_elements = kMaxEvaluatedMaskElements);

}  // namespace cinn_like::hlir
