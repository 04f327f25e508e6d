/// \file Loop partitioning: split a loop at the point where the tail guard of a non-exact split
/// starts to matter, so the main part runs without it.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// For each serial or parallel loop `for o in [min, min + E)` whose body has a guard (an `if`
/// without else) with a conjunct affine in o with a positive coefficient, like
/// `o * f + inner < extent`: finds the first o where the conjunct may fail for some value of
/// the loops between o and the guard, and splits the loop there into a main loop without
/// the conjunct and a tail loop that keeps it (iterations keep their order). Inner loops of
/// the main part are partitioned in turn; the tail is left as it is. GPU-bound loops and loops
/// around them (the launch has one shape), vectorized and unrolled loops are left whole. A loop
/// whose body touches shared memory or calls a block reduce (barriers, now or after
/// insert_sync) is not split where the split point depends on a threadIdx variable: all
/// threads must run its barriers together. A serial or parallel loop whose whole body is a
/// guard independent of its variable becomes that guard around the loop.
Stmt PartitionLoops(const Stmt& s);

}  // namespace cinn_like::ir
