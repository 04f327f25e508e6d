/// \file The bounds check of index tensors a user hands in (gather, index_add, one_hot,
/// check_index): an extern stage that calls a runtime function checking every index and
/// copying the tensor; the op's compute reads the copy, so the check runs first, and an index
/// out of range fails the call with a message naming the op, its tensors and the value, as
/// PyTorch raises. On x86 the check always runs; on GPUs only with the debug flag
/// FLAGS_cinn_like_check_indices (the check synchronizes), without which GPU computes keep
/// their safe fallback (clamp, skip, match nothing).
#pragma once

#include <string>

#include "ir/tensor.h"

namespace cinn_like::hlir::ops {

/// The runtime function that checks indices on this target, or null when GPU code does not
/// check (FLAGS_cinn_like_check_indices off).
const char* IndexCheckFunction(bool gpu);

/// `t` as "name dtype[d0, d1]" for messages.
std::string DescribeIrTensor(const ir::Tensor& t);

/// "op <op> (<name>): index <index> into axis <a> of <x>": how an op indexing an axis of `x`
/// starts its error message.
std::string AxisIndexWhat(const std::string& op, const std::string& name, const ir::Tensor& index,
                          int a, const ir::Tensor& x);

/// `index` (int32 or int64, any rank) as `check` returns it once every value is in
/// [low, high); the stage is named `name` + "_index". `what` starts the error message.
ir::Tensor CheckedIndices(const ir::Tensor& index, ir::Expr low, ir::Expr high,
                          const std::string& what, const std::string& name, const char* check);

}  // namespace cinn_like::hlir::ops
