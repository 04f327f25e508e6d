/// \file A call's hooks (cinn_like_call_plan_run_hooked). Outputs the call allocates: an output
/// given no memory is asked of the caller's allocator just before the first statement that
/// writes it, after the large workspaces of earlier statements were freed; its values equal a
/// call given the memory up front; a refused allocation fails the call naming the output,
/// leaking nothing. Inputs the call hands back: each after the last statement that reads it.
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
  std::vector<std::vector<int64_t>> shapes;  // of the arguments, inputs then the output
  Compiled(const frontend::Program& p, std::vector<std::vector<int64_t>> arg_shapes)
      : shapes(std::move(arg_shapes)) {
    const std::string json = frontend::ProgramToJson(p);
    EXPECT_EQ(cinn_like_compile(json.c_str(), "x86", "f", &module), 0)
        << cinn_like_get_last_error();
    if (module) EXPECT_EQ(cinn_like_module_lookup(module, "f", &fn), 0);
    if (!fn) return;
    std::vector<DLTensor> args(shapes.size());
    std::vector<DLTensor*> examples;
    for (size_t i = 0; i < shapes.size(); ++i) {
      DLTensor& t = args[i];
      t.device = {kDLCPU, 0};
      t.dtype = {kDLFloat, 32, 1};
      t.ndim = static_cast<int32_t>(shapes[i].size());
      t.shape = shapes[i].data();
      examples.push_back(&t);
    }
    EXPECT_EQ(cinn_like_call_plan_create(fn, examples.data(), static_cast<int32_t>(examples.size()),
                                         &plan),
              0)
        << cinn_like_get_last_error();
  }
  explicit Compiled(const frontend::Program& p)
      : Compiled(p, {{2, kRows, kCols}, {kRows, kCols}}) {}
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
  ASSERT_EQ(cinn_like_call_plan_run_hooked(c.plan, lazy, nullptr, &Outputs::Alloc, &outputs,
                                           nullptr, nullptr),
            0)
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
  ASSERT_EQ(cinn_like_call_plan_run_hooked(c.plan, both, nullptr, &Outputs::Alloc, &outputs,
                                           nullptr, nullptr),
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
  EXPECT_NE(cinn_like_call_plan_run_hooked(c.plan, lazy, nullptr, &Outputs::Alloc, &outputs,
                                           nullptr, nullptr),
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
  EXPECT_NE(cinn_like_call_plan_run_hooked(c.plan, no_input, nullptr, &Outputs::Alloc, &outputs,
                                           nullptr, nullptr),
            0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("argument 0"));
  EXPECT_TRUE(outputs.indices.empty());
  EXPECT_EQ(
      cinn_like_call_plan_run_hooked(c.plan, lazy, nullptr, nullptr, nullptr, nullptr, nullptr),
      -1);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("argument 1"));
}

/// out = sum over axis 0 of y * max_row(tanh(sum over axis 0 of x)): x is read by the first
/// statement only, y by the last, which writes the output.
frontend::Program TwoInputs() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, hlir::MakeShape({2, kRows, kCols}), "x");
  auto y = b.CreateInput(DType::kFloat32, hlir::MakeShape({2, kRows, kCols}), "y");
  auto ra = b.ReduceMax(b.Tanh(b.ReduceSum(x, {0})), {1}, /*keepdim=*/true);
  b.MarkOutput(b.ReduceSum(b.Mul(y, b.BroadcastTo(ra, {2, kRows, kCols})), {0}));
  return *b.Build();
}

/// What the hooks were asked, in order: "alloc <index>" and "release <index>".
struct Events {
  std::vector<std::string> log;
  std::vector<void*> blocks;
  ~Events() {
    for (void* p : blocks) std::free(p);
  }
  static void* Alloc(void* ctx, int32_t index, size_t bytes) {
    auto* self = static_cast<Events*>(ctx);
    self->log.push_back("alloc " + std::to_string(index));
    self->blocks.push_back(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    return self->blocks.back();
  }
  static void Release(void* ctx, int32_t index) {
    static_cast<Events*>(ctx)->log.push_back("release " + std::to_string(index));
  }
};

TEST(ReleasedInputs, EachInputIsHandedBackAfterTheLastStatementThatReadsIt) {
  Compiled c(TwoInputs(), {{2, kRows, kCols}, {2, kRows, kCols}, {kRows, kCols}});
  ASSERT_NE(c.plan, nullptr);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(2 * kRows * kCols), y(2 * kRows * kCols), given(kRows * kCols);
  for (float& v : x) v = dist(rng);
  for (float& v : y) v = dist(rng);
  void* data[] = {x.data(), y.data(), given.data()};
  ASSERT_EQ(cinn_like_call_plan_run(c.plan, data, nullptr), 0) << cinn_like_get_last_error();
  // x is handed back before the output is allocated for the last statement, y after it.
  Events events;
  void* lazy[] = {x.data(), y.data(), nullptr};
  ASSERT_EQ(cinn_like_call_plan_run_hooked(c.plan, lazy, nullptr, &Events::Alloc, &events,
                                           &Events::Release, &events),
            0)
      << cinn_like_get_last_error();
  EXPECT_THAT(events.log, ::testing::ElementsAre("release 0", "alloc 2", "release 1"));
  ASSERT_EQ(events.blocks.size(), 1u);
  EXPECT_EQ(std::memcmp(events.blocks[0], given.data(), kSumBytes), 0);
  // The release alone, outputs given: each input once, in the order of their last reads.
  Events released;
  std::vector<float> again(kRows * kCols);
  void* both[] = {x.data(), y.data(), again.data()};
  ASSERT_EQ(cinn_like_call_plan_run_hooked(c.plan, both, nullptr, nullptr, nullptr,
                                           &Events::Release, &released),
            0)
      << cinn_like_get_last_error();
  EXPECT_THAT(released.log, ::testing::ElementsAre("release 0", "release 1"));
  EXPECT_EQ(again, given);
  // Without the hook nothing is released (and the call is as before).
  ASSERT_EQ(cinn_like_call_plan_run(c.plan, both, nullptr), 0);
  EXPECT_EQ(released.log.size(), 2u);
}

}  // namespace
}  // namespace cinn_like
