/// \file LowerThreadReduce: reductions whose reduce loop is bound to threadIdx.x become a
/// private per-thread partial plus one cross-thread combine (a warp or block reduce).
#pragma once

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace cinn_like::ir {

/// Rewrites every reduction update `X[idx] = combine(X[idx], e)` (combine: +, max, min, *) that
/// sits under a loop bound to threadIdx.x whose variable does not occur in idx. Each such
/// update is a race between threads; its reduction region (the innermost enclosing loops whose
/// variables do not occur in idx, inside X's Allocate when X is allocated in a loop) becomes
///
///   for tx in threadIdx.x:                  // the bound loop, hoisted over the region
///     X_partial[0] = identity
///     <the region, its serial loops and guards kept>: X_partial[0] = combine(X_partial[0], e)
///     X_partial[0] = block_reduce_<kind>(X_partial[0])   // IntrinsicOp::kBlockReduce<Kind>
///     if (tx == 0 && <the region's guards that do not depend on its loops>)
///       X[idx] = combine(X[idx], X_partial[0])
///
/// The combine leaves the result in every thread; a local X (each thread's own copy) is stored
/// by every thread (no tx == 0 in the condition).
///
/// X_partial is a local (register) buffer. The update keeps reading X[idx], so the init store
/// that lowering emits before the region still counts; the intrinsic orders it (it starts with
/// a barrier) before thread 0's final store. Errors: the reduce loop is bound to threadIdx.y or
/// z, or two thread loops lie in one region; the message names the buffer and the loops.
absl::StatusOr<Stmt> LowerThreadReduce(const Stmt& s);

}  // namespace cinn_like::ir
