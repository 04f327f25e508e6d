/// \file The C ABI that JIT-compiled host code calls: argument checks over DLPack tensors,
/// the last-error slot, and (with CUDA) kernel launch. Every function returning int returns
/// 0 on success; otherwise the message is in cinn_like_get_last_error().
#pragma once

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The message of the last failed call on this thread ("" when none).
const char* cinn_like_get_last_error(void);
void cinn_like_set_last_error(const char* message);
void cinn_like_clear_last_error(void);

/// Fails unless got == expected.
int cinn_like_check_num_args(const char* func, int32_t got, int32_t expected);

/// Fails unless `t` is a dense row-major tensor of the given DLPack dtype (code, bits, lanes 1),
/// rank and device type; the message names the function, the argument and both sides.
int cinn_like_check_tensor(const char* func, const DLTensor* t, int32_t index, const char* name,
                           int32_t dtype_code, int32_t dtype_bits, int32_t ndim,
                           int32_t device_type);

/// The tensor's first element (data + byte_offset).
void* cinn_like_tensor_data(const DLTensor* t);
/// shape[dim]; the caller has checked the rank.
int64_t cinn_like_tensor_dim(const DLTensor* t, int32_t dim);

/// Fails unless a dimension read from a tensor equals what the function expects (a constant,
/// or a symbolic dimension already bound by an earlier argument).
int cinn_like_check_dim(const char* func, const char* tensor, int32_t dim, int64_t got,
                        int64_t expected);

/// Fails when a symbolic dimension does not fit the int32 index type.
int cinn_like_check_index_range(const char* func, const char* tensor, int32_t dim, int64_t got);

#ifdef __cplusplus
}
#endif
