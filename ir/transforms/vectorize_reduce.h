/// \file VectorizeReductions: a reduction whose reduce loop is vectorized accumulates into a
/// vector of partials and reduces its lanes once at the end.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Rewrites every reduction update `X[idx] = combine(X[idx], e)` (combine: +, max, min, *) under a
/// kVectorized loop `v` of constant extent L whose variable does not occur in idx. Its reduction
/// region (the innermost enclosing loops whose variables do not occur in idx, inside X's
/// Allocate when X is allocated in a loop) becomes
///
///   X_vacc[0:L] = identity                      // a local buffer of L partials
///   <the region>: X_vacc[v] = combine(X_vacc[v], e)
///   if (<the region's guards that do not depend on its loops>)
///     X[idx] = combine(X[idx], vector_reduce_<kind>(X_vacc[ramp(0, 1, L)]))
///
/// so that VectorizeLoops, run next, widens the update into vector loads, a vector combine and
/// a vector store of the partials. A tail guard `o * L + v < E` of a split reduce axis (o the
/// serial loop directly around v) would stop vectorization; the loop over o is peeled instead:
/// o in [0, E / L) runs vectorized without it, the rest runs serially with it. Reductions
/// reassociate: lane k sums the elements k, k + L, ... and the lanes are summed at the end.
Stmt VectorizeReductions(const Stmt& s);

}  // namespace cinn_like::ir
