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
/// over the spatial loops that follow it.
absl::StatusOr<Stmt> LowerStage(const Stage& stage);

}  // namespace cinn_like::ir
