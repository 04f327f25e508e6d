/// \file OpenCL code as bytes (backends/device_compiler.h): what one compiler built, another
/// loads and runs without compiling; Export writes the OpenCL C beside the host object; an
/// image of another kind is refused before anything is loaded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "backends/compiler.h"
#include "frontend/net_builder.h"
#include "hlir/graph_compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/fusion_cases.h"
#include "tests/opencl/opencl_executor.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

/// relu(x * x) of a random [64, 256] tensor through `fn`, against the same formula here.
void ExpectReluOfSquare(backends::EntryFunction fn) {
  TypedTensor x(ir::Float(32), {64, 256}), y(ir::Float(32), {64, 256});
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  const int64_t count = 64 * 256;
  for (int64_t k = 0; k < count; ++k) x.Set(k, dist(rng));
  DLTensor* args[] = {x.dl(), y.dl()};
  ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
  const float* in = static_cast<const float*>(x.data());
  const float* out = static_cast<const float*>(y.data());
  for (int64_t k = 0; k < count; ++k) {
    ASSERT_EQ(out[k], in[k] * in[k] > 0 ? in[k] * in[k] : 0.f) << "element " << k;
  }
}

TEST(OpenCLCode, WhatOneCompilerBuiltAnotherLoadsExportsAndRuns) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({64, 256}), "x");
  b.MarkOutput(b.Relu(b.Mul(x, x)));
  auto module = CompileProgramModule(*b.Build(), OpenCLTarget(), "ew");
  ASSERT_TRUE(module.ok()) << module.status();
  auto built = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_TRUE((*built)->Build(*module).ok());
  const backends::BuiltCode code = (*built)->Code();
  ASSERT_EQ(code.device.size(), 1u);
  EXPECT_FALSE(code.device[0].cubin);
  EXPECT_THAT(code.device[0].image, HasSubstr("__kernel"));
  ASSERT_FALSE(code.host_objects.empty());

  auto loaded = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  absl::Status s = (*loaded)->Load(code);
  ASSERT_TRUE(s.ok()) << s;
  auto fn = (*loaded)->Lookup("ew");
  ASSERT_TRUE(fn.ok()) << fn.status();
  ExpectReluOfSquare(*fn);

  // Export: the host object, and the OpenCL C the loaded compiler holds beside it.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("cinn_like_opencl_code_" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ew.o").string();
  s = (*loaded)->ExportObject(path);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(std::filesystem::exists(path));
  std::ifstream cl(path + ".cl", std::ios::binary);
  std::stringstream text;
  text << cl.rdbuf();
  EXPECT_EQ(text.str(), code.device[0].image);
  std::filesystem::remove_all(dir);
}

TEST(OpenCLCode, ACubinIsRefusedBeforeAnyImageIsLoaded) {
  backends::BuiltCode code;
  auto host = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(host.ok()) << host.status();
  code.host = (*host)->Code().host;
  code.device.push_back({/*cubin=*/false, "__kernel void k(void) {}", {"k"}});
  code.device.push_back({/*cubin=*/true, "not OpenCL C", {"k2"}});
  absl::Status s = (*host)->Load(code);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("holds a CUBIN"));
  EXPECT_TRUE((*host)->Code().device.empty());  // the OpenCL C before it was not loaded either
}

}  // namespace
}  // namespace cinn_like::testing
