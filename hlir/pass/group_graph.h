/// \file One fusion group of a FusedGraph as a graph of its own (the tuner compiles and times
/// groups alone, cinn_like/tune/autotune.h), and a key that names a group by its structure.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "hlir/pass/fusion.h"

namespace cinn_like::hlir {

/// The nodes of group `group` of `fused` as a graph with that one group: its inputs are the
/// values the group reads and does not make (graph inputs or other groups' results), its
/// outputs the values it makes that another group reads or that are outputs of `fused`. The
/// producers of rank-0 values it reads (which cannot be arguments) are copied into the group
/// when they are made from nothing (fill, constant: batch_norm's epsilon), and
/// such values it makes for other groups are not outputs; a rank-0 value computed at run time
/// by another group (a full reduction) is Unimplemented.
absl::StatusOr<FusedGraph> GroupGraph(const FusedGraph& fused, int group);

/// The structure of `fused` as text, names left out: inputs (dtype, shape), nodes (op,
/// attributes, inputs and outputs by position, output dtypes and shapes), outputs by position.
/// Two graphs that compute the same thing the same way have the same key.
std::string StructuralKey(const FusedGraph& fused);

}  // namespace cinn_like::hlir
