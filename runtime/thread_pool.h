/// \file The CPU thread pool that JIT-compiled parallel loops run on, behind a C ABI.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Runs fn(i, closure) for every i in [0, extent) on a persistent pool of
/// std::thread::hardware_concurrency() threads, splitting the range into one contiguous chunk
/// per thread (static scheduling); the caller runs a chunk too and returns when all are done.
/// Runs serially on the calling thread when extent < 2, when the pool has one thread, or when
/// called from inside a pool task (nested parallel loops). Returns 0.
int cinn_like_parallel_for(int32_t extent, void (*fn)(int32_t, void*), void* closure);

/// The number of threads a parallel loop may use (the caller included).
int32_t cinn_like_num_threads(void);

#ifdef __cplusplus
}
#endif
