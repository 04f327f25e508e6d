/// \file The C ABI that JIT-compiled host code calls: argument checks over DLPack tensors,
/// the last-error slot, and (with CUDA) kernel launch. Every function returning int returns
/// 0 on success; otherwise the message is in cinn_like_get_last_error().
#pragma once

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The message of the last failed call on this thread ("" when none).
const char* cinn_like_get_last_error(void);
void cinn_like_set_last_error(const char* message);
void cinn_like_clear_last_error(void);

/// Fails unless got == expected and `args` is not null (null only when expected is 0): the
/// host entry's first check, before it reads any argument.
int cinn_like_check_args(const char* func, DLTensor* const* args, int32_t got, int32_t expected);

/// Fails unless `t` is a dense row-major tensor of the given DLPack dtype (code, bits, lanes 1),
/// rank and device type, with a shape (when ndim > 0), no negative size, data unless it has
/// no element, and at most `max_elements` elements (what the function's index type addresses:
/// ir::MaxIndexedElements); the message names the function, the argument and both sides. A
/// passing check formats nothing and allocates nothing.
int cinn_like_check_tensor(const char* func, const DLTensor* t, int32_t index, const char* name,
                           int32_t dtype_code, int32_t dtype_bits, int32_t ndim,
                           int32_t device_type, int64_t max_elements);

/// Fails when an output shares memory with another argument (an input or another output): the
/// host entry's check after the tensors' own, before anything runs. `outputs` has one character
/// per argument, '1' for an output; `names` the arguments' names joined by commas. Tensors with
/// no element overlap nothing; tensors of DLPack's OpenCL device type (a cl_mem in `data`)
/// overlap only within one cl_mem.
int cinn_like_check_overlap(const char* func, DLTensor* const* args, int32_t num_args,
                            const char* outputs, const char* names);

/// What the host entry expects of one argument, for cinn_like_check_arguments (a table in the
/// entry's constants; the layout the code generator writes). `ndim` is the function's rank of
/// the argument, `program_ndim` the rank the Program's signature declares: the same, or 0 for
/// a Program's rank-0 value, which the function holds as one element (ndim 1, its dim 1).
/// `output` is 1 for an output: its data may be null while the thread has an output allocator
/// (runtime/call_hooks.h), the entry then allocating it (cinn_like_alloc_output).
typedef struct {
  const char* name;
  int32_t dtype_code, dtype_bits, ndim, program_ndim, device_type, output;
  int64_t max_elements;
} cinn_like_argument_desc;

/// The entry's per-argument checks in one call, in argument order: cinn_like_check_tensor of
/// each, then cinn_like_check_dim of each dim whose `dims` entry is >= 0 (`dims` holds every
/// argument's ndim entries in turn; -1 is a symbolic dim the entry checks itself); on success
/// data[i] is cinn_like_tensor_data(args[i]). An argument whose program_ndim is 0 takes a
/// rank-0 tensor as well as the one-element vector; any other takes its ndim only. A tensor of
/// another rank is refused with both shapes in the message (a symbolic size printed as "?").
/// One call for any number of arguments keeps the entry's code, and LLVM's time on it, linear
/// in them.
int cinn_like_check_arguments(const char* func, DLTensor* const* args, int32_t num_args,
                              const cinn_like_argument_desc* descs, const int64_t* dims,
                              void** data);

/// The tensor's first element (data + byte_offset).
void* cinn_like_tensor_data(const DLTensor* t);
/// The memory of output `index` of `args`, given none by the caller (null data): asked of the
/// thread's output allocator (runtime/call_hooks.h) by the host entry before the first
/// statement that writes it, and stored in the tensor (data, byte_offset 0). Null when there is
/// no allocator or it fails, with the last error naming `func`, the output and its bytes.
void* cinn_like_alloc_output(const char* func, DLTensor* const* args, int32_t index,
                             const char* name);
/// Called by the host entry after the last statement that names input `index` (its work
/// queued): passed to the thread's input release (runtime/call_hooks.h), if any.
void cinn_like_release_input(int32_t index);
/// shape[dim]; the caller has checked the rank.
int64_t cinn_like_tensor_dim(const DLTensor* t, int32_t dim);

/// Fails unless `fits` (the host entry evaluated a symbolic size in 64 bits, found no overflow
/// and a value in [0, max]); `what` says which size and from which dims its symbols come,
/// `value` is what it computed (wrapped where it overflowed).
int cinn_like_check_size_fits(const char* func, const char* what, int32_t fits, int64_t value,
                              int64_t max);

/// Fails unless a dimension read from a tensor equals what the function expects (a constant,
/// or a symbolic dimension already bound by an earlier argument).
int cinn_like_check_dim(const char* func, const char* tensor, int32_t dim, int64_t got,
                        int64_t expected);

/// cinn_like_check_dim for a symbolic size: `what` is its expression and the dims that bound
/// its symbols ("s1 (s1 from q dim 2)"), for the message.
int cinn_like_check_symbolic_dim(const char* func, const char* tensor, int32_t dim, int64_t got,
                                 int64_t expected, const char* what);

/// Fails unless `got`, the size a tensor's dim gives `symbol`, is in [min, max] (the Program's
/// bounds of that symbol, or 1 at least where `why`, an op's reason, is not empty).
int cinn_like_check_size_range(const char* func, const char* tensor, int32_t dim, int64_t got,
                               const char* symbol, int64_t min, int64_t max, const char* why);

/// Fails when a symbolic dimension does not fit the int32 index type.
int cinn_like_check_index_range(const char* func, const char* tensor, int32_t dim, int64_t got);

/// Checks that each of the `count` indices at `indices` (int32 or int64: `bits`) is in
/// [low, high) and copies them to `out` (host memory both; the computes read the copy, so the
/// check comes first). An index out of range sets the last error "<what>: index V (at
/// position K) is out of range [low, high)" and returns 1. `stream` is unused (CPU).
int cinn_like_check_indices(const void* indices, void* out, int64_t count, int64_t bits,
                            int64_t low, int64_t high, const char* what, void* stream);

/// A framework's allocator for the workspaces (intermediate buffers) of compiled functions.
/// `device_type` is a DLPack device type (kDLCPU = 1, kDLCUDA = 2), `device_id` the device
/// (for CUDA, the device of the context current on the calling thread), `stream` the stream the
/// function was called on (a CUstream for CUDA: the buffer may be used by work queued on it until
/// that work ends; null on CPU). `alloc` returns null on failure; `free` is given what `alloc`
/// returned, with the same device and stream.
typedef void* (*cinn_like_alloc_fn)(void* ctx, size_t bytes, int32_t device_type, int32_t device_id,
                                    void* stream);
typedef void (*cinn_like_free_fn)(void* ctx, void* ptr, int32_t device_type, int32_t device_id,
                                  void* stream);

/// Installs the allocation hook for every device (both functions, or both null to restore the
/// defaults: CPU aligned_alloc(64) with large blocks kept for reuse (runtime/cpu_block_cache.h),
/// CUDA cinn_like_cuda_workspace_alloc); `ctx` is passed back
/// to them. Install it before calling compiled functions: a buffer is freed by the hook
/// installed when it is freed. Fails when only one of the two functions is null.
int cinn_like_set_allocator(cinn_like_alloc_fn alloc, cinn_like_free_fn free, void* ctx);

/// What JIT-compiled host code calls around the kernels that use an intermediate buffer:
/// `bytes` (0 allowed) through the installed hook on `stream`, at least 64-byte aligned. Null
/// on failure, with the last error naming the bytes and the device; never aborts.
void* cinn_like_alloc_workspace(int32_t device_type, size_t bytes, void* stream);
/// Gives back what cinn_like_alloc_workspace returned (null is a no-op).
int cinn_like_free_workspace(int32_t device_type, void* ptr, void* stream);

#ifdef __cplusplus
}
#endif
