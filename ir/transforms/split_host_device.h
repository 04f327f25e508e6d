/// \file The host/device split for GPU targets, the last lowering pass (ir::Lower runs it):
/// GPU-bound loop nests become device kernels and the host entry keeps only their launches.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace cinn_like::ir {

/// Splits the host entry `f` (indices already flattened): every top-level statement of its
/// body that contains a GPU-bound loop becomes a kDeviceKernel `f_kernel` (`f_kernel_<k>` when
/// there are several) taking the buffers it touches (in f's argument order; written ones as
/// outputs) and then the symbolic dimensions it reads; its launch dims are the extents of its
/// bound loops (the largest when an axis is bound more than once). The result is `f` with the
/// same arguments, whose body launches the kernels in order (intrinsic launch_kernel) and whose
/// `kernels` are those kernels; a top-level extern call (Evaluate of intrinsic extern_call,
/// ir::ExternCall) stays in its place between the launches. A top-level loop nest without any
/// GPU binding is an error naming the function and the buffer it writes. The function's
/// intermediates (global-scope Allocates wrapping its body, as ir::Lower makes them) stay in
/// the host entry around the launches (the host allocates them in device memory through the
/// runtime's hook); a kernel touching one takes it after f's buffers, in allocation order. A
/// top-level launch_kernel (of a kernel the backend supplies, not in `kernels`, as
/// hlir/ops/attention_kernel.cc makes) stays in place too, like an extern call. A kernel equal
/// to an earlier one up to its buffers and variables, with its arguments in the same roles and
/// the same launch dims (a repeated layer's), is not made again: its launch names the earlier
/// kernel, with this statement's buffers. With `merge_nests`, independent nests of one launch
/// shape are one kernel (GroupIndependentNests, ir/transforms/merge_nests.h): a group's
/// statements take the place of one top-level statement above.
absl::StatusOr<LoweredFunc> SplitHostDevice(const LoweredFuncNode& f, bool merge_nests = false);

/// A kernel as one statement for comparison: its arguments' data pointers and scalars in order,
/// its launch dims, then its body. Two kernels whose forms are equal up to buffers and free
/// variables (ir::StructuralEqualUpToBuffers) do the same to their i-th arguments: first
/// appearance pairs the i-th of one with the i-th of the other.
Stmt KernelComparableForm(const LoweredFuncNode& kernel);

}  // namespace cinn_like::ir
