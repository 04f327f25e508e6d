/// \file Attention masks computed at the shape they vary over, which the attention reads
/// broadcast (a stride of 0 over each axis of extent 1).
///
/// Hugging Face's BERT builds its padding mask in the traced graph: the [B, S]
/// attention_mask input becomes a [B, 1, 1, S] keep-test of each key, combined by logical_and
/// with a [1, 1, S, 1] test of each query that holds everywhere (constant folding makes it an
/// all-true constant), broadcast to [B, 1, S, S] and turned into 0 / -inf by a where. Compiled
/// as written, a kernel writes the [B, 1, S, S] float mask (8 MiB at batch 8 of 512 tokens) and
/// every attention reads it whole, where the keys' test alone is B * S values.
///
/// Here the mask input of each attention and attention_grad node is replaced by its narrow form
/// where that differs from it (has axes of 1 where the mask has more): a value's narrow form is
/// computed from the narrow forms of the values it reads, where
///   - a broadcast_to's is its input's (with leading axes of 1 where it adds rank, all of known
///     extent: else the broadcast_to's value itself);
///   - a fill's, or a constant's whose values are all equal, is a fill over axes of 1;
///   - an elementwise node's (one output that is the broadcast of its inputs, numpy's rule) is
///     the node on its inputs' narrow forms;
///   - any other value (an input, a gather, a reshape) is itself.
/// The mask's values are unchanged (each narrow form broadcasts to its value); the original
/// computation stays for dead-code elimination to remove where nothing else reads it.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// The graph with each attention mask that narrows (the rules above) read in its narrow form;
/// every other node copied as it is.
absl::StatusOr<Graph> NarrowAttentionMasks(const Graph& graph);

}  // namespace cinn_like::hlir
