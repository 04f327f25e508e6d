/// \file The first lowering step: one stage's schedule to its loop nest.
#pragma once

#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/schedule.h"

namespace cinn_like::ir {

/// The loop nest computing the stage's tensor, with multi-dimensional Load/Store: one For per
/// leaf axis in leaf order, root indices rebuilt from the leaves through the split and fuse
/// relations, and a guard `root < extent` for every split whose factor does not divide the
/// extent. A reduction initializes its element just before the first reduce loop, in a nest
/// over the spatial loops that follow it. Loads of inlined stages are replaced by their
/// bodies; the nests of stages computed at a leaf loop are placed (with their region buffer's
/// Allocate) at the top of that loop's body, and loads of them read the region buffer.
absl::StatusOr<Stmt> LowerStage(const Stage& stage);

}  // namespace cinn_like::ir
