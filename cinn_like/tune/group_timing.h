/// \file One fusion group timed alone on the device: its inputs at random and its outputs
/// zeroed where the target's functions read them, and the seconds per call of a function
/// compiled from it. The tuner (autotune.h) times each value of a group's knob this way, the
/// group report (group_report.h) each group.
#pragma once

#include <dlpack/dlpack.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "cinn_like/compare/tensor_transfer.h"
#include "hlir/graph.h"
#include "hlir/pass/fusion.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like {

/// Whether group graph `one` (hlir::GroupGraph's) can be timed alone: FailedPrecondition with
/// the reason where it has symbolic shapes (no size to time it at) or no stored value (all it
/// makes is computed inside its readers).
absl::Status CanTimeAlone(const hlir::FusedGraph& one);

/// A function's arguments, owned: the tensors and their DLTensors in the graph's order
/// (inputs, then outputs).
struct GroupArgs {
  std::vector<std::unique_ptr<DeviceTensor>> tensors;
  std::vector<DLTensor*> args;
};

/// The inputs of `graph` at random (RandomInputs, seed 1) and its outputs zero, on the device
/// `target`'s functions read; an error where a tensor cannot be placed (no memory now). The
/// graph's shapes must be static.
absl::StatusOr<GroupArgs> PlaceGroupArgs(const hlir::Graph& graph, const ir::Target& target);

/// Function `fname` of `module`, built for `target` (NVGPU: its kernels compiled by NVRTC and
/// loaded), with the compiler that holds it.
struct BuiltFunction {
  std::unique_ptr<backends::Compiler> compiler;
  backends::EntryFunction fn = nullptr;
};
absl::StatusOr<BuiltFunction> BuildFunction(const ir::Module& module, const ir::Target& target,
                                            const std::string& fname);

/// Seconds per call of `f` on `args`: the best of three batches of calls lasting about 2 ms
/// each (at most 200 calls), after two warm-up calls (a module's first call loads it and makes
/// its library plans) and one timed alone. The device is synchronized at the end of each batch.
absl::StatusOr<double> SecondsPerCall(const BuiltFunction& f, const ir::Target& target,
                                      std::vector<DLTensor*>& args);

}  // namespace cinn_like
