/// \file Lowering: scheduled tensors to a LoweredFunc. The whole pass order is in Lower().
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/schedule.h"
#include "ir/target.h"
#include "ir/tensor.h"

namespace cinn_like::ir {

/// Lowers every stage of `schedule` into one host-entry function `name` whose arguments are
/// `args` in order: placeholders become inputs, computed tensors outputs (DESIGN.md's calling
/// convention wants the inputs first). Computed tensors that are not arguments become
/// temporaries: a global Allocate around the body (a device workspace that the host entry
/// allocates on a GPU target). For a GPU target (Target::is_gpu) the function comes back
/// split: its body launches the device kernels listed in its `kernels` (SplitHostDevice is the
/// last pass). Errors name the function and the tensor at fault. With the dump flag on, the IR
/// after each pass is written to <dump>/<name>.<NN>_<pass>.ir.
absl::StatusOr<LoweredFunc> Lower(const std::string& name, const std::vector<Tensor>& args,
                                  const Schedule& schedule, const Target& target);

}  // namespace cinn_like::ir
