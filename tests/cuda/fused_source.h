/// \file The CUDA source of a Program for sm_90 (no GPU needed), checked to compile to PTX,
/// and the count of its kernels: what the NVGPU fusion and tactic tests read.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/host_ir.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {

/// How many times `text` occurs in `source`.
inline int CountOccurrences(const std::string& source, const std::string& text) {
  int n = 0;
  for (size_t p = source.find(text); p != std::string::npos; p = source.find(text, p + 1)) ++n;
  return n;
}

inline int CountKernels(const std::string& source) {
  return CountOccurrences(source, "__global__");
}

/// The CUDA source of `program` (entry `name`), after checking it compiles to PTX.
inline std::string CompiledSource(const Program& program, const std::string& name = "fused") {
  const ir::Target target = ir::Target::NVGPU(90);
  auto module = CompileProgramModule(program, target, name);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  auto compiler = backends::Compiler::Create(target);
  auto src = (*compiler)->GetSourceCode(*module);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return "";
  backends::nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, name);
  EXPECT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  return *src;
}

/// The host LLVM IR of `program` (entry `name`) for sm_90: its launches.
inline std::string CompiledHostIR(const Program& program, const std::string& name = "fused") {
  auto module = CompileProgramModule(program, ir::Target::NVGPU(90), name);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  auto ir = backends::CudaHostIR(*module);
  EXPECT_TRUE(ir.ok()) << ir.status();
  return ir.ok() ? *ir : "";
}

}  // namespace cinn_like::testing
