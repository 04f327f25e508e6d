/// \file What the schedules need to know of the device a target runs on: how many
/// multiprocessors (cores) share the work, the most threads and shared memory a block may
/// have. A backend that can ask its device registers a query (the NVGPU backend asks the CUDA
/// driver); it runs once per target and is cached. Without a device (compiling CUDA on a
/// machine with no GPU) the answer is a stated default for the target's arch, so that a
/// schedule depends only on the target, the flags and the device that is there.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "ir/target.h"

namespace cinn_like::ir {

struct DeviceProperties {
  int multiprocessors = 1;          // SMs on a GPU; hardware threads on a CPU
  int max_threads_per_block = 1;    // 1 on CPUs
  int shared_memory_per_block = 0;  // bytes a block may have without opting in; 0 on CPUs
  int vector_bytes = 16;            // the widest vector register (x86: 32 AVX2, 64 AVX-512)
  std::string source;               // "device" or "default for sm_90": for the dump
};

/// A backend's question to its device; an error means "no device here" (defaults are used).
using DevicePropertiesQuery = std::function<absl::StatusOr<DeviceProperties>(const Target&)>;

/// Registers the query for targets with `target.arch` (one per arch; a later one replaces it).
void RegisterDevicePropertiesQuery(Target::Arch arch, DevicePropertiesQuery query);

/// The properties of the device `target` runs on: the registered query's answer, asked once
/// per target string and cached, or the defaults of DefaultDeviceProperties.
const DeviceProperties& DevicePropertiesOf(const Target& target);

/// Defaults without a device: on GPUs the SM count of the arch's data-center part (132 for
/// sm_90, an H100/H200 SXM; 108 for sm_80; 80 otherwise), 1024 threads, 48 KiB shared memory;
/// on CPUs the host's hardware threads. Vector bytes: Target::vector_bytes().
DeviceProperties DefaultDeviceProperties(const Target& target);

}  // namespace cinn_like::ir
