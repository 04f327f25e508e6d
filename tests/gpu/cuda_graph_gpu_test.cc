/// \file GPU machine only: a prepared call captured into a CUDA graph through the C API
/// (cinn_like_call_plan_capture) and launched on new inputs written in place matches the
/// reference interpreter at each launch, on the library's stream and on the caller's; the
/// capture's workspaces are the graph's, not the installed allocator's; a stream the caller
/// captures already is refused before anything runs, and a call that cannot be recorded fails
/// with the driver's message and leaves the stream working.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/counting_allocator.h"
#include "tests/gpu/device_buffer.h"
#include "tests/reference_case.h"

namespace cinn_like {
namespace {

using hlir::DType;
using testing::DeviceBuffer;
using testing::DeviceTensor;
using ::testing::HasSubstr;

constexpr int64_t kRows = 48, kInner = 96, kCols = 72;

/// sum(relu(x @ w + b), axis 1): a matmul (a library call where cuBLASLt takes it) and a row
/// sum over its result, an intermediate in a workspace.
frontend::Program MatmulReluRowSum() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, hlir::MakeShape({kRows, kInner}), "x");
  auto w = b.CreateInput(DType::kFloat32, hlir::MakeShape({kInner, kCols}), "w");
  auto bias = b.CreateInput(DType::kFloat32, hlir::MakeShape({kCols}), "b");
  b.MarkOutput(b.ReduceSum(b.Relu(b.Add(b.Matmul(x, w), bias)), {1}));
  return *b.Build();
}

int64_t Elements(const hlir::HostTensor& t) { return t.size(); }

/// The module of MatmulReluRowSum for cuda, its entry, device buffers for its arguments
/// (inputs then the output) and a plan of them.
class CapturedCall : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string json = frontend::ProgramToJson(program_);
    ASSERT_EQ(cinn_like_compile(json.c_str(), "cuda", "f", &module_), 0)
        << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_module_lookup(module_, "f", &fn_), 0) << cinn_like_get_last_error();
    shapes_ = {{kRows, kInner}, {kInner, kCols}, {kCols}, {kRows}};
    for (auto& shape : shapes_) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      buffers_.push_back(std::make_unique<DeviceBuffer>(n * sizeof(float)));
      tensors_.push_back(DeviceTensor(buffers_.back()->get(), shape, {kDLFloat, 32, 1}));
      data_.push_back(buffers_.back()->get());
    }
    std::vector<DLTensor*> examples;
    for (DLTensor& t : tensors_) examples.push_back(&t);
    ASSERT_EQ(cinn_like_call_plan_create(fn_, examples.data(), 4, &plan_), 0)
        << cinn_like_get_last_error();
  }
  void TearDown() override {
    cinn_like_call_plan_free(plan_);
    cinn_like_module_free(module_);
  }

  /// Fresh random inputs copied into the input buffers (the same addresses each time); the
  /// output filled with NaN. Returns the reference's output for them.
  hlir::HostTensor WriteFreshInputs() {
    testing::ReferenceCase c = testing::MakeReferenceCase(program_);
    EXPECT_TRUE(c.ok);
    if (!c.ok) return {};
    seed_ = c.seed;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::vector<float> host(c.inputs[i].data.begin(), c.inputs[i].data.end());
      EXPECT_EQ(cinn_like_cuda_memcpy_to_device(data_[i], host.data(), host.size() * 4), 0);
    }
    std::vector<float> nan(Elements(c.want[0]), NAN);
    EXPECT_EQ(cinn_like_cuda_memcpy_to_device(data_[3], nan.data(), nan.size() * 4), 0);
    return c.want[0];
  }

  /// The output against `want`: max |got - want| <= 1e-4 * (1 + |want|) per element (float32
  /// sums of 96 * 72 products against the reference's float64).
  void ExpectOutput(const hlir::HostTensor& want, const std::string& when) {
    ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
    std::vector<float> got(Elements(want));
    ASSERT_EQ(cinn_like_cuda_memcpy_to_host(got.data(), data_[3], got.size() * 4), 0);
    int wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!(std::fabs(got[i] - want.data[i]) <= 1e-4 * (1 + std::fabs(want.data[i])))) {
        if (wrong++ < 3)
          ADD_FAILURE() << when << " " << seed_ << ": s[" << i << "] = " << got[i] << ", want "
                        << want.data[i];
      }
    }
    EXPECT_EQ(wrong, 0) << when << " " << seed_;
  }

  frontend::Program program_ = MatmulReluRowSum();
  cinn_like_module module_ = nullptr;
  cinn_like_function fn_ = nullptr;
  cinn_like_call_plan plan_ = nullptr;
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
  std::vector<DLTensor> tensors_;
  std::vector<void*> data_;
  std::string seed_;
};

TEST_F(CapturedCall, EachLaunchComputesTheInputsWrittenInPlace) {
  const hlir::HostTensor first = WriteFreshInputs();
  cinn_like_cuda_graph graph = nullptr;
  ASSERT_EQ(cinn_like_call_plan_capture(plan_, data_.data(), nullptr, &graph), 0)
      << cinn_like_get_last_error();
  ASSERT_NE(graph, nullptr);
  ExpectOutput(first, "the capture's own run");
  for (int launch = 0; launch < 3; ++launch) {
    const hlir::HostTensor want = WriteFreshInputs();
    ASSERT_EQ(cinn_like_cuda_graph_launch(graph, nullptr), 0) << cinn_like_get_last_error();
    ExpectOutput(want, "launch " + std::to_string(launch));
  }
  cinn_like_cuda_graph_free(graph);
  // The plan still runs as before.
  const hlir::HostTensor again = WriteFreshInputs();
  ASSERT_EQ(cinn_like_call_plan_run(plan_, data_.data(), nullptr), 0) << cinn_like_get_last_error();
  ExpectOutput(again, "a plain run after the graph was freed");
}

TEST_F(CapturedCall, TheGraphsWorkspacesAreNotTheInstalledAllocators) {
  testing::CountingAllocator counting;
  ASSERT_TRUE(counting.installed());
  const hlir::HostTensor first = WriteFreshInputs();
  ASSERT_EQ(cinn_like_call_plan_run(plan_, data_.data(), nullptr), 0) << cinn_like_get_last_error();
  ExpectOutput(first, "a plain run");
  const int per_call = counting.allocs;
  ASSERT_GT(per_call, 0) << "the row sum's input is a workspace";
  cinn_like_cuda_graph graph = nullptr;
  ASSERT_EQ(cinn_like_call_plan_capture(plan_, data_.data(), nullptr, &graph), 0)
      << cinn_like_get_last_error();
  // The capture's first run asks the hook; what it records does not.
  EXPECT_EQ(counting.allocs, 2 * per_call);
  EXPECT_EQ(counting.frees, counting.allocs);
  for (int launch = 0; launch < 2; ++launch) {
    const hlir::HostTensor want = WriteFreshInputs();
    ASSERT_EQ(cinn_like_cuda_graph_launch(graph, nullptr), 0) << cinn_like_get_last_error();
    ExpectOutput(want, "launch " + std::to_string(launch));
  }
  EXPECT_EQ(counting.allocs, 2 * per_call);
  cinn_like_cuda_graph_free(graph);
}

TEST_F(CapturedCall, WrongArgumentsAndNullsAreRefused) {
  WriteFreshInputs();
  cinn_like_cuda_graph graph = nullptr;
  EXPECT_NE(cinn_like_call_plan_capture(nullptr, data_.data(), nullptr, &graph), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("the plan is null"));
  EXPECT_NE(cinn_like_call_plan_capture(plan_, nullptr, nullptr, &graph), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("the data pointers are null"));
  EXPECT_NE(cinn_like_call_plan_capture(plan_, data_.data(), nullptr, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("the output pointer is null"));
  EXPECT_NE(cinn_like_cuda_graph_launch(nullptr, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("graph is null"));
  // A plan made from a wrong example: the capture's first run fails with the call's message.
  std::vector<int64_t> wrong_w{kInner + 1, kCols};
  DLTensor w = DeviceTensor(data_[1], wrong_w, {kDLFloat, 32, 1});
  DLTensor* examples[] = {&tensors_[0], &w, &tensors_[2], &tensors_[3]};
  cinn_like_call_plan bad = nullptr;
  ASSERT_EQ(cinn_like_call_plan_create(fn_, examples, 4, &bad), 0);
  EXPECT_NE(cinn_like_call_plan_capture(bad, data_.data(), nullptr, &graph), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("tensor w has size 97 at dim 0"));
  EXPECT_EQ(graph, nullptr);
  cinn_like_call_plan_free(bad);
}

/// A stream of the test's own, destroyed at scope exit.
class Stream {
 public:
  Stream() {
    auto d = runtime::cuda::Driver();
    EXPECT_TRUE(d.ok()) << d.status();
    if (d.ok()) driver_ = *d;
    EXPECT_TRUE(runtime::cuda::EnsureContext().ok());
    if (driver_) EXPECT_EQ(driver_->StreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  ~Stream() {
    if (stream_) driver_->StreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  const runtime::cuda::DriverApi* driver() const { return driver_; }

 private:
  const runtime::cuda::DriverApi* driver_ = nullptr;
  CUstream stream_ = nullptr;
};

TEST_F(CapturedCall, OnTheCallersStream) {
  Stream stream;
  ASSERT_NE(stream.get(), nullptr);
  const hlir::HostTensor first = WriteFreshInputs();
  cinn_like_cuda_graph graph = nullptr;
  ASSERT_EQ(cinn_like_call_plan_capture(plan_, data_.data(), stream.get(), &graph), 0)
      << cinn_like_get_last_error();
  ExpectOutput(first, "the capture's own run");
  const hlir::HostTensor want = WriteFreshInputs();
  ASSERT_EQ(cinn_like_cuda_graph_launch(graph, stream.get()), 0) << cinn_like_get_last_error();
  ExpectOutput(want, "a launch on the caller's stream");
  cinn_like_cuda_graph_free(graph);
}

TEST_F(CapturedCall, AStreamTheCallerCapturesIsRefusedBeforeAnythingRuns) {
  Stream stream;
  ASSERT_NE(stream.get(), nullptr);
  WriteFreshInputs();
  const runtime::cuda::DriverApi& d = *stream.driver();
  ASSERT_EQ(d.StreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  cinn_like_cuda_graph graph = nullptr;
  EXPECT_NE(cinn_like_call_plan_capture(plan_, data_.data(), stream.get(), &graph), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("the stream is being captured already"));
  EXPECT_EQ(graph, nullptr);
  // The caller's capture was not broken: it still ends well.
  CUgraph callers = nullptr;
  ASSERT_EQ(d.StreamEndCapture(stream.get(), &callers), CUDA_SUCCESS);
  ASSERT_NE(callers, nullptr);
  d.GraphDestroy(callers);
}

TEST(CapturedCallFailure, ACallThatCannotBeRecordedFailsAndTheStreamStillWorks) {
  // A gather whose indices the host checks (a debug flag): the check synchronises.
  constexpr int64_t kTable = 40, kWidth = 24, kPicks = 17;
  frontend::NetBuilder b;
  auto table = b.CreateInput(DType::kFloat32, hlir::MakeShape({kTable, kWidth}), "table");
  auto index = b.CreateInput(DType::kInt64, hlir::MakeShape({kPicks}), "index");
  b.MarkOutput(b.Gather(table, index, 0));
  const std::string json = frontend::ProgramToJson(*b.Build());
  ASSERT_EQ(cinn_like_set_flag("cinn_like_check_indices", "true"), 0) << cinn_like_get_last_error();
  cinn_like_module module = nullptr;
  const int compiled = cinn_like_compile(json.c_str(), "cuda", "g", &module);
  ASSERT_EQ(cinn_like_set_flag("cinn_like_check_indices", "false"), 0);
  ASSERT_EQ(compiled, 0) << cinn_like_get_last_error();
  cinn_like_function fn = nullptr;
  ASSERT_EQ(cinn_like_module_lookup(module, "g", &fn), 0) << cinn_like_get_last_error();

  std::vector<float> rows(kTable * kWidth);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i % 997) * 0.5f - 3.0f;
  std::vector<int64_t> picks(kPicks);
  for (int64_t i = 0; i < kPicks; ++i) picks[i] = (i * 7 + 3) % kTable;
  DeviceBuffer table_d(rows.size() * 4), index_d(picks.size() * 8), out_d(kPicks * kWidth * 4);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_device(table_d.get(), rows.data(), rows.size() * 4), 0);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_device(index_d.get(), picks.data(), picks.size() * 8), 0);
  std::vector<int64_t> table_shape{kTable, kWidth}, index_shape{kPicks}, out_shape{kPicks, kWidth};
  DLTensor t = DeviceTensor(table_d.get(), table_shape, {kDLFloat, 32, 1});
  DLTensor i = DeviceTensor(index_d.get(), index_shape, {kDLInt, 64, 1});
  DLTensor o = DeviceTensor(out_d.get(), out_shape, {kDLFloat, 32, 1});
  DLTensor* examples[] = {&t, &i, &o};
  cinn_like_call_plan plan = nullptr;
  ASSERT_EQ(cinn_like_call_plan_create(fn, examples, 3, &plan), 0);
  void* data[] = {table_d.get(), index_d.get(), out_d.get()};

  Stream stream;
  ASSERT_NE(stream.get(), nullptr);
  cinn_like_cuda_graph graph = nullptr;
  EXPECT_NE(cinn_like_call_plan_capture(plan, data, stream.get(), &graph), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("cinn_like_call_plan_capture: "));
  EXPECT_EQ(graph, nullptr);
  // The stream is not left capturing: a plain run on it works and gathers the right rows.
  std::vector<float> nan(kPicks * kWidth, NAN);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_device(out_d.get(), nan.data(), nan.size() * 4), 0);
  ASSERT_EQ(cinn_like_call_plan_run(plan, data, stream.get()), 0) << cinn_like_get_last_error();
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
  std::vector<float> got(kPicks * kWidth);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_host(got.data(), out_d.get(), got.size() * 4), 0);
  for (int64_t r = 0; r < kPicks; ++r) {
    for (int64_t c = 0; c < kWidth; ++c) {
      ASSERT_EQ(got[r * kWidth + c], rows[picks[r] * kWidth + c]) << "row " << r << " col " << c;
    }
  }
  cinn_like_call_plan_free(plan);
  cinn_like_module_free(module);
}

}  // namespace
}  // namespace cinn_like
