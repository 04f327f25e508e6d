/// \file Reshape simplification: a reshape to the shape its input already has is no op, and a
/// reshape of a reshape is one reshape of the first one's input (a row-major reshape keeps the
/// order of the elements). Traced models are full of both (a view back to the same shape, a
/// view of a view). Most fuse away, but one that reads a library call's result was a copy
/// kernel of it (nn.TransformerEncoderLayer's feed-forward activation: 8 MiB each call).
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Drops every reshape, and every broadcast_to, whose output shape equals its input's (its
/// readers read the input; a broadcast_to of a value to its own shape is a copy kernel of a
/// softmax's [B, H, S, S] probabilities in HF's eager attention, expanded before its matmul);
/// one that is a graph output stays, unless its input is what one node computes for it alone
/// (that node then computes the output). Makes every reshape of a reshape read the first one's
/// input; a reshape left unread goes in dead-code elimination. Nodes that reach no output are
/// dropped first. A cast that is a
/// reshape's one reader is moved before it (autocast's reshape -> cast -> matmul: the reshape
/// then meets the matmul, which folds it, and the cast joins the group of what it casts).
/// A sum, mean, max, min or product over axes of extent 1 only that keeps its input's dtype
/// is a reshape of its input, and a reshape that only drops the dims such a reduction kept
/// (keepdim) is the reduction without keepdim when it is the reduction's one reader.
absl::StatusOr<Graph> SimplifyReshapes(const Graph& graph);

}  // namespace cinn_like::hlir
