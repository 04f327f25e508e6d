/// \file The OpenCL Executor for the table-driven tests: builds a module for the OpenCL target
/// (PoCL's CPU device in CI) and calls its entry on the host tensors in place.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "backends/compiler.h"
#include "ir/printer.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/typed_kernels.h"

namespace cinn_like::testing {

inline const ir::Target& OpenCLTarget() {
  static const ir::Target target = ir::Target::OpenCL();
  return target;
}

inline void RunOnOpenCL(const ir::Module& module, std::vector<TypedTensor*>& args) {
  auto compiler = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status s = (*compiler)->Build(module);
  ASSERT_TRUE(s.ok()) << s << "\n" << ir::ToString(module);
  auto fn = (*compiler)->Lookup(module.name);
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<DLTensor*> dl;
  for (TypedTensor* t : args) dl.push_back(t->dl());
  ASSERT_EQ((*fn)(dl.data(), static_cast<int32_t>(dl.size()), nullptr), 0)
      << cinn_like_get_last_error();
}

}  // namespace cinn_like::testing
