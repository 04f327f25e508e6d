/// \file Library kernels: hand-written CUDA templates that an extern tensor launches from host
/// code (intrinsic launch_kernel naming a kernel the module does not generate) and that the
/// CUDA backend adds to the device module, compiled by NVRTC with the generated kernels. The
/// fused attention and its backward (backends/cuda/attention_kernel_source.h,
/// attention_grad_source.h) are the one library today; a new one adds its name test and source
/// here.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace cinn_like::backends {

/// The kernels the host entries of `module` launch that are none of its generated kernels
/// (ir::DeviceKernels), each once, in first-launch order.
std::vector<std::string> LibraryKernelNames(const ir::Module& module);

/// The CUDA C defining the library kernels `names`: each library's template once, then one
/// `extern "C" __global__` function per name. Empty for no names; an error names a kernel that
/// no library defines.
absl::StatusOr<std::string> LibraryKernelsSource(const std::vector<std::string>& names);

}  // namespace cinn_like::backends
