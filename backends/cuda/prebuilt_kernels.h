/// \file Library kernels compiled when cinn_like is built (as a framework ships its flash
/// attention precompiled), so that a cold compile of a model with attention skips NVRTC's
/// slowest unit: the float32 attention instance alone took 250 ms of NVRTC, most of a GPT-2
/// block's device compile.
///
/// tools/build_library_kernels writes, at build time, the file libcinn_like_kernels.bin next to
/// libcinn_like.so: CUBINs of the common attention instances (hlir::PrebuiltAttentionKernels)
/// for the archs the build names (CMake's CINN_LIKE_PREBUILT_ARCHS). Each entry keeps the
/// fingerprint of the CUDA C it was compiled from (LibraryUnitSource) and of the NVRTC options
/// that change code, so an entry whose source or options differ from today's is never used: the
/// Build compiles that kernel with NVRTC, as it does a kernel or arch the file lacks, PTX requests
/// and a missing or damaged file.
///
/// Format (little-endian):
///   "CLPKERN1"  u32 entries
///   per entry:  u32 name length, name, u32 arch (90), u64 PrebuiltSourceHash, u64 image Fnv1a64,
///               u64 image size
///   u64 Fnv1a64 of every byte above, then the images in entry order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cinn_like::backends {

struct PrebuiltKernel {
  std::string name;
  int arch = 0;
  uint64_t source_hash = 0;  // PrebuiltSourceHash of the unit it was compiled from
  std::string image;         // CUBIN
};

std::string EncodePrebuiltKernels(const std::vector<PrebuiltKernel>& kernels);
/// The entries of a prebuilt kernel file; DataLoss naming `origin` and what is wrong for a
/// file that is not one, is truncated, or whose index or an image fails its checksum.
absl::StatusOr<std::vector<PrebuiltKernel>> DecodePrebuiltKernels(std::string_view bytes,
                                                                  const std::string& origin);

/// The file this process reads: $CINN_LIKE_PREBUILT_KERNELS when set (empty: none), else
/// libcinn_like_kernels.bin in the folder of the library holding this code.
std::string PrebuiltKernelsPath();

/// The translation unit a library kernel compiles as on its own: the unit preamble, the
/// library's template and the instance.
absl::StatusOr<std::string> LibraryUnitSource(const std::string& kernel);

/// What an entry's source_hash is: Fnv1a64 of `source` and of the NVRTC options that change
/// code (fast math), as this process would compile it now.
uint64_t PrebuiltSourceHash(const std::string& source);

/// The CUBIN of library kernel `kernel` for sm_<arch> from the prebuilt file (read once per
/// process), when it holds one compiled from `source`; else nullopt (a damaged file is logged
/// once and then ignored).
std::optional<std::string> PrebuiltKernelImage(const std::string& kernel, int arch,
                                               const std::string& source);

}  // namespace cinn_like::backends
