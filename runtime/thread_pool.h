/// \file The CPU thread pool that JIT-compiled parallel loops run on, behind a C ABI, or the
/// OpenMP team of the libraries that run on one (oneDNN, the host framework), once one is
/// loaded.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Runs fn(i, closure) for every i in [0, extent) on a persistent pool of
/// std::thread::hardware_concurrency() threads (or on the calling thread's OpenMP team of as
/// many threads, see UseOpenMpForParallelLoops), splitting the range into one contiguous chunk
/// per thread (static scheduling); the caller runs a chunk too and returns when all are done.
/// Runs serially on the calling thread when extent < 2, when the pool has one thread, or when
/// called from inside a pool task (nested parallel loops). Returns 0. Safe across fork(): a
/// child process makes a pool of its own at its first parallel loop (and runs its loops there,
/// not on the OpenMP team of its parent's loops, whose threads it does not have).
int cinn_like_parallel_for(int32_t extent, void (*fn)(int32_t, void*), void* closure);

/// The number of threads a parallel loop may use (the caller included).
int32_t cinn_like_num_threads(void);

/// 1 when parallel loops run on an OpenMP team (UseOpenMpForParallelLoops, AdoptGlobalOpenMp),
/// 0 when on the pool.
int32_t cinn_like_parallel_on_openmp(void);

#ifdef __cplusplus
}

namespace cinn_like::runtime {

/// The entry points of a loaded OpenMP runtime (libgomp's ABI, which LLVM's libomp exports too).
struct OpenMpRuntime {
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
  int (*thread_num)();
  int (*num_threads)();
};

/// From now on, parallel loops run on the calling thread's team of `omp` instead of the pool.
/// A library running on OpenMP (oneDNN) leaves its threads spinning for a while after each call
/// (OMP_WAIT_POLICY's default); on as many cores, the pool's threads would fight them for the
/// cores until they sleep, where the same team takes the next loop at once. Called by whoever
/// loads such a library; the first call wins. Ignored under ThreadSanitizer, which does not
/// see OpenMP's synchronization.
void UseOpenMpForParallelLoops(const OpenMpRuntime& omp);

/// The OpenMP runtime of the process's global scope, where the host loaded one (PyTorch loads
/// its libgomp so): from the first parallel loop on, loops run on its team, as the host's own
/// kernels (and Inductor's generated C++) do, not on a second pool that wakes by condition
/// variable and competes for the same cores. Looked up once; nothing changes without one.
void AdoptGlobalOpenMp();

}  // namespace cinn_like::runtime
#endif
