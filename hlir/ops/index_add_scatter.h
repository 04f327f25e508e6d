/// \file index_add as a deterministic scatter on GPUs (index_add_scatter.cc says how).
#pragma once

#include <string>

#include "ir/tensor.h"

namespace cinn_like::hlir::ops {

/// out = x with updates[..., k, ...] added at out[..., index[k], ...] along `axis`, as an
/// extern tensor named `name` whose statement is two GPU kernels (a copy, then the scatter;
/// the scatter alone where lowering hands it out as x, ir/in_place_extern.h), reading the
/// index's links (`<name>_links`, an extern tensor of its own: a third kernel).
/// Index values outside [0, x.shape[axis]) are skipped.
ir::Tensor IndexAddScatter(const ir::Tensor& x, const ir::Tensor& index, const ir::Tensor& updates,
                           int axis, const std::string& name);

}  // namespace cinn_like::hlir::ops
