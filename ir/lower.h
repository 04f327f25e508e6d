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
/// temporaries (x86 only for now). Errors name the function and the tensor at fault.
/// With the dump flag on, the IR after each pass is written to <dump>/<name>.<NN>_<pass>.ir.
absl::StatusOr<LoweredFunc> Lower(const std::string& name, const std::vector<Tensor>& args,
                                  const Schedule& schedule, const Target& target);

}  // namespace cinn_like::ir
