/// \file The OpenCL runtime: a device chosen once per selection (platform, device, context and
/// an in-order queue, kept for the process), programs built from OpenCL C, their kernels, and
/// the launch that JIT-compiled host code calls (cinn_like_opencl_launch).
///
/// Memory: an OpenCL target's tensors and workspaces are host memory, as the framework's CPU
/// tensors are. A launch wraps each buffer argument in a cl_mem over that memory
/// (CL_MEM_USE_HOST_PTR), and before it returns maps the written ones back, so the host sees
/// the results. On a CPU device (PoCL) the kernel works in place; a discrete GPU copies each
/// buffer to the device and the written ones back, per launch. A buffer whose address is not a
/// multiple of kOpenCLBufferAlignment is copied into a buffer of the device's own
/// (CL_MEM_COPY_HOST_PTR) and a written one read back: so every buffer a kernel gets is
/// aligned to kOpenCLBufferAlignment bytes, which the code generator's vector accesses assume.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/opencl/opencl_api.h"

namespace cinn_like::runtime::opencl {

/// The alignment, in bytes, of every buffer argument a kernel gets (at least the widest vector
/// access the OpenCL printer makes without vload/vstore).
inline constexpr int kOpenCLBufferAlignment = 16;

/// What the code generator and the schedules need to know of a device.
struct DeviceInfo {
  std::string platform, name;  // as the ICD reports them
  bool is_cpu = false;
  bool fp16 = false;  // cl_khr_fp16
  bool fp64 = false;  // cl_khr_fp64, or a double precision configuration
  bool correctly_rounded_div_sqrt = false;
  int compute_units = 1;
  int max_work_group_size = 1;
  int64_t local_memory_bytes = 0;
  std::string Describe() const;  // "Portable Computing Language / pthread-... (CPU)"
};

class Device {
 public:
  /// The device for `kind` ("cpu", "gpu" or empty: any) and `spec` (the flag
  /// cinn_like_opencl_device: empty for the first device of that kind, a number for the n-th,
  /// else a case-insensitive part of "<platform> / <device>"). Made once per (kind, spec) and
  /// kept for the process. FailedPrecondition naming every device seen when none matches.
  static absl::StatusOr<Device*> Select(const std::string& kind, const std::string& spec);

  const DeviceInfo& info() const { return info_; }
  cl_device_id id() const { return id_; }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }

 private:
  DeviceInfo info_;
  cl_device_id id_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;  // in order, profiling enabled
};

/// One kernel of a built program; a launch holds `mu` while it sets the arguments and enqueues
/// (a cl_kernel's arguments are shared state until the enqueue captures them).
struct Kernel {
  std::string name;
  Device* device = nullptr;
  cl_kernel handle = nullptr;
  std::mutex mu;
};

/// A program built for one device, and its kernels.
class Program {
 public:
  /// Builds `source` (OpenCL C) for `device`. InvalidArgument with the build log when the
  /// compiler rejects it ("building OpenCL program <name> for <device> failed:\n<log>").
  static absl::StatusOr<std::unique_ptr<Program>> Build(Device* device, const std::string& source,
                                                        const std::string& name);
  ~Program();
  /// The kernel named `name` (made on first request; the pointer lives as long as this).
  absl::StatusOr<Kernel*> GetKernel(const std::string& name);

 private:
  Device* device_ = nullptr;
  cl_program program_ = nullptr;
  std::string name_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

}  // namespace cinn_like::runtime::opencl

extern "C" {

/// One argument of a launch: `value` points at the argument (a scalar of `bytes` bytes, or a
/// buffer's host pointer); for buffers `bytes` is the buffer's size.
struct cinn_like_opencl_arg {
  void* value;
  int64_t bytes;
  int32_t kind;  // CINN_LIKE_OPENCL_SCALAR, _INPUT or _OUTPUT
  int32_t reserved;
};
enum { CINN_LIKE_OPENCL_SCALAR = 0, CINN_LIKE_OPENCL_INPUT = 1, CINN_LIKE_OPENCL_OUTPUT = 2 };

/// Runs `kernel` (a runtime::opencl::Kernel*) on grid x block work-items and waits for it; the
/// written buffers are back in host memory when it returns. `stream` is unused (one in-order
/// queue per device). Returns 0, or nonzero with the last error naming the kernel, its launch
/// and OpenCL's code.
int cinn_like_opencl_launch(void* kernel, int32_t grid_x, int32_t grid_y, int32_t grid_z,
                            int32_t block_x, int32_t block_y, int32_t block_z, void* stream,
                            const cinn_like_opencl_arg* args, int32_t num_args);

/// The device time of the kernels launched on this thread since the last call, in nanoseconds
/// (OpenCL's profiling of each NDRange, transfers excluded): for benchmarks.
int64_t cinn_like_opencl_take_kernel_ns(void);

}  // extern "C"
