/// \file Loading, ahead of a first compile and beside the framework's own work, what that
/// compile asks for first: for NVGPU the CUDA libraries the library checks load (cuBLASLt, with
/// its first heuristic query, and cuDNN) and NVRTC's builtins. The torch backend starts it when
/// Dynamo hands it a graph on CUDA tensors, so that the libraries load while AOTAutograd traces (a
/// cold GPT-2 block spent 70 ms of its compile loading cuBLASLt, resnet18 more loading cuDNN).
#pragma once

#include "ir/target.h"

namespace cinn_like {

/// Starts the warm-up for `target` on a background thread, in the calling thread's CUDA
/// context, once per process (later calls, and targets with nothing to load, return at once).
/// Failures are not reported here: the compile that needs a library reports them.
void WarmUp(const ir::Target& target);

/// Waits for a warm-up still running (the pipeline calls it before lowering for a build,
/// cinn_like/pipeline/lower_and_build.h, so that the thread ends while the process works, not
/// during its exit, when the libraries it loads may already be torn down). Cheap when there is
/// none.
void FinishWarmUp();

}  // namespace cinn_like
