/// \file What the compiler generates code for: an x86 CPU, an NVIDIA GPU of one arch, or an
/// OpenCL device.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cinn_like::ir {

struct Target {
  enum class Arch { kX86, kNVGPU, kOpenCL };

  Arch arch = Arch::kX86;
  int bits = 64;
  /// CPU features ("avx2", ...) or extra library names ("cublas") parsed from a target string.
  std::vector<std::string> features;
  /// NVGPU only: compute capability as major*10+minor (90 for sm_90); 0 means "ask the device,
  /// or the cinn_like_cuda_arch flag" when the Compiler is created.
  int cuda_arch = 0;
  /// OpenCL only: the kind of device to run on, "cpu", "gpu", or empty for the first device
  /// (the flag cinn_like_opencl_device picks one by index or name).
  std::string opencl_device;

  static Target X86() { return Target{}; }
  static Target NVGPU(int cuda_arch = 0) {
    Target t;
    t.arch = Arch::kNVGPU;
    t.cuda_arch = cuda_arch;
    return t;
  }
  static Target OpenCL(std::string device = "") {
    Target t;
    t.arch = Arch::kOpenCL;
    t.opencl_device = std::move(device);
    return t;
  }
  /// Parses "x86", "cuda", "cuda -arch=sm_90", "nvgpu -arch=sm_80", "opencl",
  /// "opencl -device=cpu".
  static absl::StatusOr<Target> Parse(const std::string& text);

  bool is_x86() const { return arch == Arch::kX86; }
  bool is_nvgpu() const { return arch == Arch::kNVGPU; }
  bool is_opencl() const { return arch == Arch::kOpenCL; }

  // Traits: what ir/ and hlir/ ask instead of comparing target kinds. A new device answers
  // them here (docs/architecture.md, "Adding a target").

  /// A device with its own memory and a grid of thread blocks: kernels are split from the host
  /// entry (split_host_device), loops bind to blocks and threads, reductions across threads
  /// become block reduces, and intermediates are device workspaces.
  bool is_gpu() const { return arch == Arch::kNVGPU || arch == Arch::kOpenCL; }
  /// Block-shared on-chip memory (cache_read/cache_write into "shared", barriers).
  bool has_shared_memory() const { return is_gpu(); }
  /// Threads that run in lockstep and exchange values by shuffles; 1 on CPUs. OpenCL keeps
  /// the CUDA granularity for its schedules and reduces across it through local memory.
  int warp_size() const { return is_gpu() ? 32 : 1; }
  /// The most threads one block may have; 1 on CPUs.
  int max_threads_per_block() const { return is_gpu() ? 1024 : 1; }
  /// The widest vector load or store one thread issues, in bytes: 16 (float4) on GPUs, one AVX2
  /// register (32) on x86.
  int vector_bytes() const { return is_gpu() ? 16 : 32; }
  /// How many lanes of `bits`-wide scalars fill one such vector.
  int vector_lanes(int bits) const { return vector_bytes() * 8 / bits; }
  /// Loops may run on the runtime's CPU thread pool (ForKind::kParallel).
  bool has_parallel_loops() const { return arch == Arch::kX86; }
  /// "x86", "cuda -arch=sm_90" or "opencl -device=cpu".
  std::string ToString() const;
  bool operator==(const Target& o) const {
    return arch == o.arch && bits == o.bits && cuda_arch == o.cuda_arch && features == o.features &&
           opencl_device == o.opencl_device;
  }
};

}  // namespace cinn_like::ir
