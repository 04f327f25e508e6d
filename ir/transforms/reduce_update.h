/// \file Recognizing the reduction updates lowering emits, for the passes that rewrite them
/// (LowerThreadReduce, VectorizeReductions).
#pragma once

#include <set>
#include <vector>

#include "ir/ir.h"
#include "ir/tensor.h"

namespace cinn_like::ir {

/// True when `op` is `X[idx] = combine(X[idx], e)` with combine `+` (either operand order),
/// max or min; sets the kind and e.
bool MatchReduceUpdate(const Store* op, ReduceKind* kind, Expr* e);

/// The loops of `loops` (outermost first) that form the update's reduction region: the
/// longest innermost run whose variables do not occur in the update's indices. Returns the
/// position of the region's outermost loop (loops.size() when the region is empty).
size_t ReductionRegionStart(const std::vector<const For*>& loops, const Store* update);

/// Adds to `out` the conjuncts of `cond` (split at &&) that use none of `vars`, once each.
void AddGuardsFreeOf(const Expr& cond, const std::set<const Variable*>& vars,
                     std::vector<Expr>* out);

}  // namespace cinn_like::ir
