/// \file The GPU machine's Executor for the table-driven tests: builds a module for the
/// device, copies host tensors in, calls the entry, synchronizes and copies them back.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/typed_kernels.h"

namespace cinn_like::testing {

/// Library kernels RunOnGpu's builds loaded prebuilt (backends/cuda/prebuilt_kernels.h).
inline int& GpuPrebuiltKernelsLoaded() {
  static int loaded = 0;
  return loaded;
}

inline void RunOnGpu(const ir::Module& module, std::vector<TypedTensor*>& tensors) {
  auto compiler = backends::Compiler::Create(module.target);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status s = (*compiler)->Build(module);
  ASSERT_TRUE(s.ok()) << s;
  GpuPrebuiltKernelsLoaded() += (*compiler)->last_build_times().prebuilt_kernels;
  auto fn = (*compiler)->Lookup(module.name);
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<void*> device(tensors.size());
  std::vector<DLTensor> views(tensors.size());
  std::vector<DLTensor*> args;
  for (size_t k = 0; k < tensors.size(); ++k) {
    ASSERT_EQ(cinn_like_cuda_malloc(&device[k], std::max<size_t>(tensors[k]->bytes(), 1)), 0)
        << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(device[k], tensors[k]->data(), tensors[k]->bytes()),
              0);
    views[k] = *tensors[k]->dl();
    views[k].data = device[k];
    views[k].device = {kDLCUDA, 0};
    args.push_back(&views[k]);
  }
  ASSERT_EQ((*fn)(args.data(), static_cast<int32_t>(args.size()), nullptr), 0)
      << cinn_like_get_last_error();
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
  for (size_t k = 0; k < tensors.size(); ++k) {
    ASSERT_EQ(cinn_like_cuda_memcpy_to_host(tensors[k]->data(), device[k], tensors[k]->bytes()), 0);
    cinn_like_cuda_free(device[k]);
  }
}

}  // namespace cinn_like::testing
