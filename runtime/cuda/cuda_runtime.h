/// \file The CUDA part of the runtime C ABI: kernel launch (called by JIT-compiled host code)
/// and device memory helpers for tests and frameworks. Every function returns 0 on success,
/// else -1 with the message in cinn_like_get_last_error(); none aborts without a driver.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Launches the CUfunction `function` (kernel `kernel_name`, for messages) on `stream` (a
/// CUstream; null is the legacy default stream) with args[i] pointing at argument i's value.
/// Any grid dim <= 0 (an empty tensor) returns 0 without launching. A failure names the kernel,
/// the grid, the block and the driver's error. Kernel faults surface later, at a synchronize.
int cinn_like_cuda_launch(void* function, const char* kernel_name, int32_t grid_x, int32_t grid_y,
                          int32_t grid_z, int32_t block_x, int32_t block_y, int32_t block_z,
                          int32_t shared_mem_bytes, void* stream, void** args, int32_t num_args);

/// A kernel argument whose pointer the kernel assumes a multiple of `alignment` bytes (its
/// vector accesses: backends/cuda/kernel_alignment.h).
typedef struct {
  int32_t index;     /* which of the launch's args */
  int32_t alignment; /* bytes, a power of two (16, 8 or 4) */
  int32_t written;   /* nonzero: the kernel writes the buffer */
  int64_t bytes;     /* the buffer's size */
} cinn_like_aligned_arg;

/// cinn_like_cuda_launch for arguments that may break `aligned`'s assumptions (host code calls
/// it where its test of the pointers failed): each misaligned buffer is copied into a workspace
/// (cinn_like_alloc_workspace: 64-byte aligned) on `stream`, the kernel runs on the copies, the
/// copies of written buffers are copied back and the workspaces freed, all in stream order. A
/// written buffer is copied in too (a kernel may write part of it). Aligned arguments are passed
/// as they are.
int cinn_like_cuda_launch_realigned(void* function, const char* kernel_name, int32_t grid_x,
                                    int32_t grid_y, int32_t grid_z, int32_t block_x,
                                    int32_t block_y, int32_t block_z, int32_t shared_mem_bytes,
                                    void* stream, void** args, int32_t num_args,
                                    const cinn_like_aligned_arg* aligned, int32_t num_aligned);

/// Device memory of device 0's primary context (`bytes` 0 still gives a valid pointer).
int cinn_like_cuda_malloc(void** ptr, size_t bytes);
/// Frees what cinn_like_cuda_malloc gave; null is a no-op.
int cinn_like_cuda_free(void* ptr);
int cinn_like_cuda_memcpy_to_device(void* dst, const void* src, size_t bytes);
int cinn_like_cuda_memcpy_to_host(void* dst, const void* src, size_t bytes);
/// The default CUDA workspace allocator of cinn_like_alloc_workspace: stream-ordered
/// (cuMemAllocAsync/cuMemFreeAsync on `stream`) where the driver and device support memory
/// pools, else cuMemAlloc, and cuStreamSynchronize(stream) before cuMemFree. `bytes` 0 still
/// gives a valid pointer. Frameworks install their own through cinn_like_set_allocator.
int cinn_like_cuda_workspace_alloc(void** ptr, size_t bytes, void* stream);
int cinn_like_cuda_workspace_free(void* ptr, void* stream);
/// Waits for all work of the current context (cuCtxSynchronize): where asynchronous kernel
/// faults are reported.
int cinn_like_cuda_synchronize(void);
/// cinn_like_check_indices for device memory: waits for the context (the indices may be
/// computed by kernels queued before), copies them to the host, checks them and copies them
/// to `out` on the device. Compiled in only with FLAGS_cinn_like_check_indices (a debug flag:
/// it synchronizes); without it, GPU computes clamp or skip out-of-range indices.
int cinn_like_cuda_check_indices(const void* indices, void* out, int64_t count, int64_t bits,
                                 int64_t low, int64_t high, const char* what, void* stream);
/// Device 0's compute capability as major*10+minor (90) in *arch.
int cinn_like_cuda_device_arch(int32_t* arch);

#ifdef __cplusplus
}
#endif
