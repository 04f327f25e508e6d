/// \file Externs that update their first input in place (TensorNode::extern_updates_first_input:
/// index_add's scatter on GPUs): where that input is an intermediate nothing else reads, its
/// producer stores straight into the extern's output and the extern skips its copy. A tied
/// embedding's gradient (a [vocabulary, width] matmul, then the lookups' rows added) then
/// needs one table-sized buffer, not two (GPT-2's training step: 147 MiB of its peak).
#pragma once

#include <set>
#include <vector>

#include "ir/ir.h"
#include "ir/tensor.h"

namespace cinn_like::ir {

/// One top-level nest of a function being lowered: the statement and the tensor it computes.
struct TensorNest {
  const TensorNode* tensor = nullptr;
  Stmt stmt;
};

/// Rewrites `nests` (producers first, as Lower builds them) for each extern that updates its
/// first input x in place, where x is computed by another of the nests, is no argument of the
/// function (`arg_buffers`), has the extern's shape and dtype, and is read by no nest but the
/// extern's: x's nest stores into the extern's output buffer instead, and the extern's
/// statement is built again with that buffer as its first input. Returns the buffers of the
/// x's so redirected, which are no longer allocated.
std::set<const BufferNode*> UpdateExternsInPlace(std::vector<TensorNest>* nests,
                                                 const std::set<const BufferNode*>& arg_buffers);

}  // namespace cinn_like::ir
