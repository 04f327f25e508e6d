/// \file The x86 Executor for the table-driven tests (tests/op_cases.h, tests/fusion_cases.h):
/// builds a module for the host and calls its entry on the host tensors in place.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "backends/compiler.h"
#include "ir/printer.h"
#include "tests/typed_kernels.h"

namespace cinn_like::testing {

inline void RunOnX86(const ir::Module& module, std::vector<TypedTensor*>& args) {
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status s = (*compiler)->Build(module);
  ASSERT_TRUE(s.ok()) << s << "\n" << ir::ToString(module);
  auto fn = (*compiler)->Lookup(module.name);
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<DLTensor*> dl;
  for (TypedTensor* t : args) dl.push_back(t->dl());
  ASSERT_EQ((*fn)(dl.data(), static_cast<int32_t>(dl.size()), nullptr), 0);
}

}  // namespace cinn_like::testing
