/// \file The arena plan of a host entry: where each of its workspaces of constant size lives in
/// the one allocation the entry makes for them. Two workspaces share bytes when no top-level
/// statement of the entry's body lies between their first and last uses (the statements run in
/// order: on the host one after another, on a GPU in launch order on the entry's stream), so
/// the arena holds the largest set of workspaces live at once, not all of them: a training
/// step's backward had every intermediate of every layer in it at the same time. A large
/// workspace gets an allocation of its own instead, made before the first statement that names
/// it and freed after the last: held by the arena it would stay allocated for the whole call,
/// beside the gradients the backward allocates as it goes.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace cinn_like::backends {

struct ArenaPlan {
  std::unordered_map<const ir::BufferNode*, int64_t> offsets;  // byte offset of each workspace
  int64_t bytes = 0;                                           // the arena's size
  // The workspaces of their own allocation: allocated before statement `first` of the body
  // under the chain, freed after statement `last` (a Block's statements, or the one statement).
  struct Own {
    const ir::BufferNode* buffer;
    int64_t bytes;
    int first, last;
  };
  std::vector<Own> own;
  const ir::StmtNode* statements = nullptr;  // the body under the chain
  // Per output asked about, the first of those statements that names it (-1: none).
  std::vector<int> output_first_use;
  // Per input asked about, the last of those statements that names it (-1: none).
  std::vector<int> input_last_use;
};

/// Plans the workspaces `body` allocates at its top (its leading chain of Allocate nodes) for
/// which `bytes_of` gives a size (>= 0; -1: not planned), each offset a multiple of `align`;
/// those of `own_bytes` or more that some statement names are `own` instead; and the first
/// statement naming each of `outputs` (data variables), which the entry allocates there when
/// the caller gave it no memory; and the last statement naming each of `inputs`, after which
/// the entry hands it back to a caller that asked (cinn_like_release_input). A workspace's live
/// range is the statements of the body under the chain (a Block's, or the one statement) that
/// name it, first to last; workspaces whose ranges overlap never share a byte. Placement:
/// largest first, each at the lowest offset clear of the placed workspaces it overlaps in time.
ArenaPlan PlanArena(const ir::Stmt& body, int64_t align,
                    const std::function<int64_t(const ir::Buffer&)>& bytes_of,
                    int64_t own_bytes = INT64_MAX,
                    const std::vector<const ir::Variable*>& outputs = {},
                    const std::vector<const ir::Variable*>& inputs = {});

}  // namespace cinn_like::backends
