/// \file Barrier insertion for GPU shared memory: a barrier (intrinsic sync_threads, CUDA's
/// `__syncthreads()`) between a write of a shared buffer and a later read of it (other threads
/// read what one thread wrote), between a read and a later overwrite, and at the end of a loop
/// body whose next iteration overwrites what this one read (the double barrier of a tiled
/// matmul's k loop).
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// An `Evaluate` of the barrier intrinsic (IntrinsicOp::kSyncThreads).
Stmt MakeSyncThreads();

/// Inserts barriers in statement sequences (Blocks) and at the end of serial loop bodies.
/// Barriers are never placed inside an `if` (threads would diverge); a conflict that only an
/// `if` separates is synchronized around the `if` instead. Conservative: any shared write
/// followed by any read of the same buffer counts as a conflict.
Stmt InsertSync(const Stmt& s);

}  // namespace cinn_like::ir
