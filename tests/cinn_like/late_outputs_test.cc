/// \file Outputs the call allocates (cinn_like_call_plan_run_allocating): an output given no
/// memory is asked of the caller's allocator just before the first statement that writes it,
/// after the large workspaces of earlier statements were freed; its values equal a call given
/// the memory up front; a refused allocation fails the call naming the output, leaking nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/counting_allocator.h"
#include "tests/test_util.h"

namespace cinn_like {
namespace {

using hlir::DType;
using ::testing::HasSubstr;

constexpr int64_t kRows = 2048, kCols = 1024;
constexpr size_t kSumBytes = size_t{kRows} * kCols * sizeof(float);

/// out = tanh(sum over axis 0 of x * max_row(tanh(sum over axis 0 of x))): two sums of 8 MiB,
/// workspaces, the first dead before the second is written; the output is written last.
frontend::Program LateOutput() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, hlir::MakeShape({2, kRows, kCols}), "x");
  auto ra = b.ReduceMax(b.Tanh(b.ReduceSum(x, {0})), {1}, /*keepdim=*/true);
  b.MarkOutput(b.Tanh(b.ReduceSum(b.Mul(x, b.BroadcastTo(ra, {2, kRows, kCols})), {0})));
  return *b.Build();
}

/// The output allocator of the tests: aligned host memory it owns, and the workspace bytes
/// live (by `workspaces`) when it was asked.
struct Outputs {
  testing::CountingAllocator* workspaces = nullptr;
  std::vector<void*> blocks;
  std::vector<int32_t> indices;
  std::vector<size_t> live_then;
  std::vector<size_t> sums_then;  // workspaces of kSumBytes allocated so far
  bool refuse = false;
  ~Outputs() {
    for (void* p : blocks) std::free(p);
  }
  static void* Alloc(void* ctx, int32_t index, size_t bytes) {
    auto* self = static_cast<Outputs*>(ctx);
    self->indices.push_back(index);
    self->live_then.push_back(self->workspaces->live_bytes);
    const std::vector<size_t>& made = self->workspaces->bytes;
    self->sums_then.push_back(std::count(made.begin(), made.end(), kSumBytes));
    if (self->refuse) return nullptr;
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    self->blocks.push_back(p);
    return p;
  }
};

struct Compiled {
  cinn_like_module module = nullptr;
  cinn_like_function fn = nullptr;
  cinn_like_call_plan plan = nullptr;
  std::vector<int64_t> x_shape{2, kRows, kCols}, out_shape{kRows, kCols};
  explicit Compiled(const frontend::Program& p) {
    const std::string json = frontend::ProgramToJson(p);
    EXPECT_EQ(cinn_like_compile(json.c_str(), "x86", "f", &module), 0)
        << cinn_like_get_last_error();
    if (module) EXPECT_EQ(cinn_like_module_lookup(module, "f", &fn), 0);
    if (!fn) return;
    DLTensor x{}, out{};
    for (auto [t, shape] : {std::pair{&x, &x_shape}, std::pair{&out, &out_shape}}) {
      t->device = {kDLCPU, 0};
      t->dtype = {kDLFloat, 32, 1};
      t->ndim = static_cast<int32_t>(shape->size());
      t->shape = shape->data();
    }
    DLTensor* examples[] = {&x, &out};
    EXPECT_EQ(cinn_like_call_plan_create(fn, examples, 2, &plan), 0) << cinn_like_get_last_error();
  }
  ~Compiled() {
    cinn_like_call_plan_free(plan);
    cinn_like_module_free(module);
  }
};

TEST(LateOutputs, AnOutputIsAllocatedAfterTheWorkspacesBeforeItsFirstWrite) {
  Compiled c(LateOutput());
  ASSERT_NE(c.plan, nullptr);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(2 * kRows * kCols), given(kRows * kCols);
  for (float& v : x) v = dist(rng);
  // Given its memory up front.
  void* data[] = {x.data(), given.data()};
  ASSERT_EQ(cinn_like_call_plan_run(c.plan, data, nullptr), 0) << cinn_like_get_last_error();
  // Given none: allocated by the call after both sums, the first one freed by then.
  testing::CountingAllocator workspaces;
  ASSERT_TRUE(workspaces.installed());
  Outputs outputs;
  outputs.workspaces = &workspaces;
  void* lazy[] = {x.data(), nullptr};
  ASSERT_EQ(cinn_like_call_plan_run_allocating(c.plan, lazy, nullptr, &Outputs::Alloc, &outputs), 0)
      << cinn_like_get_last_error();
  ASSERT_EQ(outputs.blocks.size(), 1u);
  EXPECT_EQ(outputs.indices[0], 1);
  EXPECT_EQ(outputs.sums_then[0], 2u);
  EXPECT_LT(outputs.live_then[0], 2 * kSumBytes) << "the first sum is still allocated";
  EXPECT_EQ(workspaces.live_bytes, 0u);
  EXPECT_EQ(std::memcmp(outputs.blocks[0], given.data(), kSumBytes), 0);
  // A pointer given is used as it is, the allocator not asked.
  std::vector<float> again(kRows * kCols);
  void* both[] = {x.data(), again.data()};
  ASSERT_EQ(cinn_like_call_plan_run_allocating(c.plan, both, nullptr, &Outputs::Alloc, &outputs),
            0);
  EXPECT_EQ(outputs.indices.size(), 1u);
  EXPECT_EQ(again, given);
}

TEST(LateOutputs, ARefusedOutputFailsTheCallNamingItAndLeaksNothing) {
  Compiled c(LateOutput());
  ASSERT_NE(c.plan, nullptr);
  std::vector<float> x(2 * kRows * kCols, 0.5f);
  testing::CountingAllocator workspaces;
  Outputs outputs;
  outputs.workspaces = &workspaces;
  outputs.refuse = true;
  void* lazy[] = {x.data(), nullptr};
  cinn_like_clear_last_error();
  EXPECT_NE(cinn_like_call_plan_run_allocating(c.plan, lazy, nullptr, &Outputs::Alloc, &outputs),
            0);
  const std::string error = cinn_like_get_last_error();
  // Refused while the second sum was allocated: the unwind freed it.
  ASSERT_EQ(outputs.live_then.size(), 1u);
  EXPECT_GE(outputs.live_then[0], kSumBytes);
  EXPECT_THAT(error, HasSubstr("output 1"));
  EXPECT_THAT(error, HasSubstr("could not be allocated (8388608 bytes)"));
  EXPECT_EQ(workspaces.live_bytes, 0u);
  EXPECT_EQ(workspaces.allocs, workspaces.frees);
}

TEST(LateOutputs, WithoutAnAllocatorANullOutputIsRefused) {
  Compiled c(LateOutput());
  ASSERT_NE(c.plan, nullptr);
  std::vector<float> x(2 * kRows * kCols, 0.5f);
  void* lazy[] = {x.data(), nullptr};
  cinn_like_clear_last_error();
  EXPECT_NE(cinn_like_call_plan_run(c.plan, lazy, nullptr), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("argument 1"));
  // Nor is an input ever allocated.
  Outputs outputs;
  testing::CountingAllocator workspaces;
  outputs.workspaces = &workspaces;
  void* no_input[] = {nullptr, nullptr};
  EXPECT_NE(
      cinn_like_call_plan_run_allocating(c.plan, no_input, nullptr, &Outputs::Alloc, &outputs), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("argument 0"));
  EXPECT_TRUE(outputs.indices.empty());
  EXPECT_EQ(cinn_like_call_plan_run_allocating(c.plan, lazy, nullptr, nullptr, nullptr), -1);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("output allocator is null"));
}

}  // namespace
}  // namespace cinn_like
