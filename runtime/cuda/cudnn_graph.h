/// \file A convolution through cuDNN's graph (backend) API: the operation graph, the engine
/// chosen for it and its execution plan are made once per configuration; a call only packs the
/// pointers and executes. The legacy cudnnConvolutionForward rebuilds an engine behind each
/// call: on an H100 host 100-400 us per call against 15-25 us here (PyTorch takes this path).
#pragma once

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/cudnn.h"
#include "runtime/cuda/cudnn_library.h"

namespace cinn_like::runtime::cuda {

/// An execution plan (opaque; kept for the process).
struct GraphConvPlan;

/// The plan of `a`'s configuration (and the alignment of its pointers): the engines cuDNN's
/// heuristics propose, in their order, without TF32 or other down-conversion for float32;
/// the first few that make a plan are timed on `a`'s own tensors (y is overwritten) and the
/// fastest kept. An error naming `what` when no engine takes the configuration.
absl::StatusOr<std::shared_ptr<const GraphConvPlan>> MakeGraphConvPlan(const Cudnn& dnn,
                                                                       const Conv2dArgs& a,
                                                                       const std::string& what);

/// Runs `plan` on `a`'s pointers (the handle's stream already set): y = conv(x, w). `what`
/// names the convolution in an error; it is called only then (a call's path formats nothing).
absl::Status RunGraphConvPlan(const Cudnn& dnn, const GraphConvPlan& plan, const Conv2dArgs& a,
                              absl::FunctionRef<std::string()> what);

/// The byte alignment a plan assumes of `a`'s pointers (at most 16): part of its key.
int64_t GraphConvAlignment(const Conv2dArgs& a);

}  // namespace cinn_like::runtime::cuda
