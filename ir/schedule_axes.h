/// \file The axis algebra of a schedule: what each axis of a stage is in its leaf loop
/// variables (through the split and fuse relations), and the stage's element written in them.
/// Scheduling (compute_at's region inference) and lowering both use it; it lives on the
/// schedule side so that lowering depends on scheduling and never the reverse.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "ir/schedule.h"
#include "ir/substitute.h"

namespace cinn_like::ir {

/// The value of every axis of `stage` (indexed as Stage::axes()) in its leaf loop variables.
std::vector<Expr> AxisValues(const Stage& stage);

/// What the stage's body reads its root axes as: the axis values, plus the region origin for
/// the spatial axes of a stage computed at another's loop.
VarMap BodyRootValues(const Stage& stage, const std::vector<Expr>& values);

/// The stage's element (inlined loads expanded) in its leaf loop variables and those of the
/// loops enclosing it.
Expr ElementInLeafVars(const Stage& stage);

}  // namespace cinn_like::ir
