/// \file GPU machine only: the op table of tests/op_cases.h compiled by the graph compiler for
/// the device and run against the reference interpreter on fresh random inputs. Cases whose
/// module needs device temporaries (intermediate reductions) are counted and skipped until
/// NVGPU lowering supports them.
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

void RunOnGpu(const ir::Module& module, std::vector<TypedTensor*>& tensors) {
  auto compiler = backends::Compiler::Create(module.target);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status s = (*compiler)->Build(module);
  ASSERT_TRUE(s.ok()) << s;
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

TEST(OpGpu, EveryCaseMatchesReference) {
  int ran = 0;
  for (const OpCase& c : AllOpCases()) {
    RunOpCase(c, ir::Target::NVGPU(), RunOnGpu);
    ++ran;
  }
  EXPECT_GT(ran, 100);
  std::cout << "GPU: " << ran << " op cases ran against the reference\n";
}

}  // namespace
}  // namespace cinn_like::testing
