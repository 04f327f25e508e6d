/// \file cuDNN 9, loaded with dlopen at its first use (binaries start where it is absent): the
/// functions cinn_like calls, resolved once, and the process's one handle. Shared by the conv2d
/// extern (cudnn.cc) and its graph-API plans (cudnn_graph.cc).
#pragma once

// Types and enums only, from the toolkit's cudnn.h (cuDNN 9): no cuDNN symbol is linked. The
// legacy convolution API and the graph API's handle attributes are marked deprecated in cuDNN 9
// but still shipped.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>
#pragma GCC diagnostic pop

#include <string>

#include "absl/status/status.h"

namespace cinn_like::runtime::cuda {

// The entry points used, resolved with dlsym (clang-format folds this list unstably).
// clang-format off
#define CINN_LIKE_CUDNN_FUNCTIONS(X)         \
  X(cudnnCreate)                             \
  X(cudnnSetStream)                          \
  X(cudnnGetErrorString)                     \
  X(cudnnCreateTensorDescriptor)             \
  X(cudnnSetTensor4dDescriptor)              \
  X(cudnnDestroyTensorDescriptor)            \
  X(cudnnCreateFilterDescriptor)             \
  X(cudnnSetFilter4dDescriptor)              \
  X(cudnnDestroyFilterDescriptor)            \
  X(cudnnCreateConvolutionDescriptor)        \
  X(cudnnSetConvolution2dDescriptor)         \
  X(cudnnSetConvolutionGroupCount)           \
  X(cudnnSetConvolutionMathType)             \
  X(cudnnDestroyConvolutionDescriptor)       \
  X(cudnnGetConvolutionForwardAlgorithm_v7)  \
  X(cudnnGetConvolutionForwardWorkspaceSize) \
  X(cudnnConvolutionForward)                 \
  X(cudnnAddTensor)                          \
  X(cudnnFindConvolutionForwardAlgorithmEx)  \
  X(cudnnBackendCreateDescriptor)            \
  X(cudnnBackendDestroyDescriptor)           \
  X(cudnnBackendSetAttribute)                \
  X(cudnnBackendGetAttribute)                \
  X(cudnnBackendFinalize)                    \
  X(cudnnBackendExecute)
// clang-format on

/// The resolved functions and the handle; `status` says why there are none.
struct Cudnn {
  absl::Status status;
  cudnnHandle_t handle = nullptr;
#define CINN_LIKE_DECLARE(fn) decltype(&::fn) fn = nullptr;
  CINN_LIKE_CUDNN_FUNCTIONS(CINN_LIKE_DECLARE)
#undef CINN_LIKE_DECLARE
};

/// The process's cuDNN: loaded and its handle made at the first call (thread-safe), with the
/// error of that in `status` (Unavailable when libcudnn.so.9 cannot be loaded).
const Cudnn& GetCudnn();

/// Ok for CUDNN_STATUS_SUCCESS, else Internal "<what>: <call> failed: <cuDNN's message>".
absl::Status CudnnCheck(const Cudnn& dnn, cudnnStatus_t rc, const std::string& what,
                        const char* call);

}  // namespace cinn_like::runtime::cuda
