/// \file BlockReductions: a long float sum accumulates in blocks, each block's partial sum
/// added to the accumulator once, so that a sum of 2^25 ones is exact in float32.
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace cinn_like::ir {

/// Elements one partial of BlockReductions holds at most.
constexpr int64_t kReductionBlockElements = 4096;

/// Rewrites each serial loop `k` around a float sum update `X[idx] = X[idx] + e` (k not in
/// idx; the update the only store in k's body, reached through loops and guards) that adds more
/// than kReductionBlockElements elements to one X[idx], or a symbolic number:
///
///   for k in [m, m + E): body
///   =>
///   for kb in [0, E / S):
///     P[...] = 0                     // a local partial per X[idx] the body updates
///     for ki in [0, S): body[k := m + kb * S + ki], accumulating into P
///     X[idx] = X[idx] + P[...]       // under the body's guards that do not depend on k
///   Q[...] = 0                       // the rest, fewer than S, summed apart too
///   for k in [m + E / S * S, m + E): body, accumulating into Q
///   X[idx] = X[idx] + Q[...]
///
/// where S is kReductionBlockElements over the elements the loops inside k add per iteration
/// (at least 1). Loops inside k whose variables occur in idx (a vector's lanes, a chunk of
/// columns) must have constant extents; P has one element per iteration of them. An
/// accumulator then never adds more than kReductionBlockElements elements at a time: a float32
/// sum of ones stays exact up to 2^24 blocks (2^36 elements) where a plain accumulator stops at
/// 2^24, as PyTorch's cascade sum does. Runs on CPU code after VectorizeReductions (whose
/// vector partials it blocks), and on GPU code after LowerThreadReduce, where it blocks a
/// thread's own serial loop (a whole column, of a constant or symbolic number of rows, or a
/// share of a constant row longer than S). With `symbolic_shares` false, a loop of a symbolic
/// extent that divides or clamps (a share of a split loop, `(n + 255) / 256`) is left as it is (GPU
/// code: a thread's share of a symbolic row would be blocked for nothing, its loop duplicated); one
/// of a whole symbolic length (a thread that sums a column of n rows) is blocked.
Stmt BlockReductions(const Stmt& s, bool symbolic_shares = true);

}  // namespace cinn_like::ir
