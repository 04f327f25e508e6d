/// \file cuDNN, loaded with dlopen at first use (binaries start where it is absent): the conv2d
/// externs that JIT host code calls (cinn_like_cudnn_conv2d, and cinn_like_cudnn_conv2d_nhwc
/// for channels-last tensors).
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/library_args.h"

namespace cinn_like::runtime::cuda {

/// Element types of the conv2d extern (its `dtype` argument), as the matmul extern's.
enum ConvDType : int64_t { kConvFloat32 = 0, kConvFloat16 = 1 };

/// What a call computes with the convolution y = conv(x, w): y itself, or one of its gradients
/// from dy (in `y`): dx (written to `x`) or dw (written to `w`). The gradients run through the
/// graph API only, without bias.
enum ConvDirection : int64_t { kConvForward = 0, kConvBackwardData = 1, kConvBackwardFilter = 2 };

/// Forward convolution y = conv(x, w) (+ bias[k] per output channel): x [n, c, h, w],
/// w [k, c / groups, r, s], y [n, k, out_h, out_w] (NCHW), or, when `channels_last`,
/// x [n, h, w, c], w [k, r, s, c / groups], y [n, out_h, out_w, k] (NHWC: cuDNN's tensor-core
/// kernels take it without the transposes they add around NCHW float16). Float32 runs without
/// TF32 (FMA math), float16 accumulates in FP32. Device pointers; `stream` a CUstream.
struct Conv2dArgs {
  const void* x;
  const void* w;
  const void* bias;  // null: none
  void* y;
  int64_t dtype;
  int64_t n, c, h, w_dim, k, r, s, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, groups;
  void* stream;
  bool channels_last = false;
  int64_t direction = kConvForward;  // kConvBackwardData writes x, kConvBackwardFilter w
};

/// The convolution through cuDNN's graph API (cudnn_graph.h: the fastest of the heuristics'
/// first engines, timed on the tensors of the plan's first use), or where that has no engine
/// through cudnnConvolutionForward (for float32 the fastest algorithm
/// cudnnFindConvolutionForwardAlgorithmEx times, else cudnnGetConvolutionForwardAlgorithm_v7's
/// first); the workspace from cinn_like_alloc_workspace, the bias by cudnnAddTensor. Plans are made
/// at a configuration's first use (CudnnPrepareConv2d at compile time, on uninitialised
/// scratch tensors, or its first call) and kept for the process (per shape, dtype, layout,
/// convolution attributes and the pointers' alignment), so a later call only sets the stream and
/// executes. Errors name the shapes and the cuDNN status; Unavailable when libcudnn.so.9 cannot be
/// loaded (from the loader's path, /usr/local/cuda/lib64 or PyTorch's nvidia/cudnn/lib).
absl::Status CudnnConv2d(const Conv2dArgs& args);

/// Makes the plan of `args`' configuration now, on scratch tensors of its sizes (its
/// pointers and stream are not used; `bias` only says whether there is one), as the first call
/// would: the compile-time check that cuDNN takes the configuration, whose plan the first call
/// then finds made (when its pointers have the scratch's 16-byte alignment). An error when
/// cuDNN has no engine or algorithm for it; false when the plan could not be made now (no GPU,
/// not enough free memory for the scratch tensors, an empty convolution): the call decides.
absl::StatusOr<bool> CudnnPrepareConv2d(Conv2dArgs args);

/// CudnnPrepareConv2d on a worker thread of the calling thread (in its CUDA context), so that a
/// compile goes on (NVRTC, the host code) while cuDNN makes and times the plan: true when the
/// plan is queued or made already; an error, at once, for wrong arguments, a cuDNN that does not
/// load or a configuration whose plan failed before; false as CudnnPrepareConv2d. What a queued
/// plan comes to, CudnnWaitForPlans says.
absl::StatusOr<bool> CudnnPrepareConv2dBeside(Conv2dArgs args);

/// Waits until every plan this thread queued is made; the first error among them (the failed
/// plan is kept: a later check of that configuration fails at once). Ok when none was queued.
absl::Status CudnnWaitForPlans();

/// How many configurations have a plan (made or failed) in this process (for tests).
size_t CudnnPlanCount();

}  // namespace cinn_like::runtime::cuda

/// The conv2d extern (C ABI, a JIT runtime symbol): the pointers, then the integers of
/// runtime/library_args.h's CINN_LIKE_CONV2D_ARGS in its order, bias used when has_bias; 0 on
/// success, else -1 with the message in cinn_like_get_last_error().
extern "C" int cinn_like_cudnn_conv2d(const void* x, const void* w, const void* bias, void* y,
                                      CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM) void* stream);
/// The gradients of the NCHW convolution (ir::LibraryCall::kConv2dBackwardData, ...Filter):
/// dx = conv2d_backward_data(dy, w), dw = conv2d_backward_filter(x, dy), the sizes the
/// forward's; 0 on success, else -1 with the message in cinn_like_get_last_error().
extern "C" int cinn_like_cudnn_conv2d_backward_data(
    const void* dy, const void* w, void* dx,
    CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_PARAM) void* stream);
extern "C" int cinn_like_cudnn_conv2d_backward_filter(
    const void* x, const void* dy, void* dw,
    CINN_LIKE_CONV2D_GRAD_ARGS(CINN_LIKE_ARG_PARAM) void* stream);
/// The same with channels-last (NHWC) x, w and y.
extern "C" int cinn_like_cudnn_conv2d_nhwc(const void* x, const void* w, const void* bias, void* y,
                                           CINN_LIKE_CONV2D_ARGS(CINN_LIKE_ARG_PARAM) void* stream);
