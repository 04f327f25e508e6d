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
/// wherever its score is within 65000 of its row's largest kept one (exp then underflows to 0
/// in float32), and a mask made causal keeps a key in every row. A mask that broadcasts over
/// queries or keys is only dropped, never made causal.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// The most elements a mask, or any value computing it, may have to be evaluated (a [8, 1, 2048,
/// 2048] mask has 2^25): the reference interpreter computes in double, about 10 ns an element.
inline constexpr int64_t kMaxEvaluatedMaskElements = int64_t{1} << 25;

/// The graph with each constant attention mask that the rules above allow dropped (and the
/// node's `causal` attribute set where they say so); other nodes copied as they are. The
/// mask's computation stays, for dead-code elimination to remove where nothing else reads it.
absl::StatusOr<Graph> SimplifyConstantAttentionMasks(
    const Graph& graph, int64_t max_elements = kMaxEvaluatedMaskElements);

}  // namespace cinn_like::hlir
