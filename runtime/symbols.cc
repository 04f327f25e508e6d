/// \file The runtime symbol table: the one place that lists what JIT code may call.
#include "runtime/symbols.h"

#include "runtime/cinn_like_runtime.h"
#include "runtime/thread_pool.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/cuda_runtime.h"
#include "runtime/cuda/cudnn.h"
#endif
#ifdef CINN_LIKE_WITH_ONEDNN
#include "runtime/x86/onednn.h"
#endif

namespace cinn_like::runtime {

std::vector<std::pair<std::string, void*>> RuntimeSymbols() {
#define CINN_LIKE_SYMBOL(fn) \
  { #fn, reinterpret_cast < void*>(&fn) }
  return {
      CINN_LIKE_SYMBOL(cinn_like_get_last_error),
      CINN_LIKE_SYMBOL(cinn_like_set_last_error),
      CINN_LIKE_SYMBOL(cinn_like_clear_last_error),
      CINN_LIKE_SYMBOL(cinn_like_check_args),
      CINN_LIKE_SYMBOL(cinn_like_check_arguments),
      CINN_LIKE_SYMBOL(cinn_like_check_tensor),
      CINN_LIKE_SYMBOL(cinn_like_tensor_data),
      CINN_LIKE_SYMBOL(cinn_like_alloc_output),
      CINN_LIKE_SYMBOL(cinn_like_release_input),
      CINN_LIKE_SYMBOL(cinn_like_tensor_dim),
      CINN_LIKE_SYMBOL(cinn_like_check_dim),
      CINN_LIKE_SYMBOL(cinn_like_check_overlap),
      CINN_LIKE_SYMBOL(cinn_like_check_size_fits),
      CINN_LIKE_SYMBOL(cinn_like_check_symbolic_dim),
      CINN_LIKE_SYMBOL(cinn_like_check_size_range),
      CINN_LIKE_SYMBOL(cinn_like_check_index_range),
      CINN_LIKE_SYMBOL(cinn_like_parallel_for),
      CINN_LIKE_SYMBOL(cinn_like_num_threads),
      CINN_LIKE_SYMBOL(cinn_like_alloc_workspace),
      CINN_LIKE_SYMBOL(cinn_like_free_workspace),
      CINN_LIKE_SYMBOL(cinn_like_check_indices),
#ifdef CINN_LIKE_WITH_CUDA
      CINN_LIKE_SYMBOL(cinn_like_cuda_launch),
      CINN_LIKE_SYMBOL(cinn_like_cuda_launch_realigned),
      CINN_LIKE_SYMBOL(cinn_like_cublas_matmul),
      CINN_LIKE_SYMBOL(cinn_like_cudnn_conv2d),
      CINN_LIKE_SYMBOL(cinn_like_cuda_check_indices),
      CINN_LIKE_SYMBOL(cinn_like_cudnn_conv2d_nhwc),
      CINN_LIKE_SYMBOL(cinn_like_cudnn_conv2d_backward_data),
      CINN_LIKE_SYMBOL(cinn_like_cudnn_conv2d_backward_filter),
      CINN_LIKE_SYMBOL(cinn_like_cublaslt_matmul),
#endif
#ifdef CINN_LIKE_WITH_ONEDNN
      CINN_LIKE_SYMBOL(cinn_like_dnnl_matmul),
      CINN_LIKE_SYMBOL(cinn_like_dnnl_matmul_epilogue),
      CINN_LIKE_SYMBOL(cinn_like_dnnl_conv2d),
      CINN_LIKE_SYMBOL(cinn_like_dnnl_conv2d_epilogue),
#endif
  };
#undef CINN_LIKE_SYMBOL
}

}  // namespace cinn_like::runtime
