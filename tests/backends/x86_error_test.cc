/// \file x86 backend errors: each is returned (status or nonzero code with a message), never
/// an abort, and names what the user needs to fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/backends/host_funcs.h"
#include "tests/test_util.h"

namespace cinn_like::backends {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::HostTensor;

class X86Errors : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Compiler::Create(ir::Target::X86());
    ASSERT_TRUE(c.ok()) << c.status();
    compiler_ = std::move(*c);
    ASSERT_TRUE(compiler_->Build(testing::VectorAdd("myadd")).ok());
    auto fn = compiler_->Lookup("myadd");
    ASSERT_TRUE(fn.ok()) << fn.status();
    fn_ = *fn;
  }
  std::unique_ptr<Compiler> compiler_;
  EntryFunction fn_ = nullptr;
};

TEST_F(X86Errors, LookupOfAnUnknownName) {
  auto fn = compiler_->Lookup("no_such_function");
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(fn.status().message(), AllOf(HasSubstr("no_such_function"), HasSubstr("myadd")));
}

TEST_F(X86Errors, WrongNumberOfTensors) {
  HostTensor<float> a({8}), b({8});
  DLTensor* args[] = {a.dl(), b.dl()};
  EXPECT_EQ(fn_(args, 2, nullptr), -1);
  EXPECT_THAT(
      cinn_like_get_last_error(),
      AllOf(HasSubstr("myadd"), HasSubstr("expected 3 tensor arguments"), HasSubstr("got 2")));
}

TEST_F(X86Errors, WrongDType) {
  HostTensor<double> a({8});
  HostTensor<float> b({8}), c({8});
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(), AllOf(HasSubstr("myadd"), HasSubstr("(A)"),
                                                HasSubstr("float64"), HasSubstr("float32")));
}

TEST_F(X86Errors, WrongRank) {
  HostTensor<float> a({8}), b({2, 4}), c({8});
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(), AllOf(HasSubstr("myadd"), HasSubstr("(B)"),
                                                HasSubstr("rank 2"), HasSubstr("expected rank 1")));
}

TEST_F(X86Errors, StridedTensorIsRefused) {
  HostTensor<float> a({4}), b({4}), c({4});
  int64_t strides[] = {2};
  a.dl()->strides = strides;
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(),
              AllOf(HasSubstr("(A)"), HasSubstr("not contiguous"), HasSubstr("stride 2 at dim 0")));
}

// PyTorch gives empty tensors any strides (torch.empty(3, 0) has strides (1, 1)) and calls them
// contiguous: no element, no layout.
TEST_F(X86Errors, EmptyTensorWithAnyStridesIsAccepted) {
  HostTensor<float> a({0}), b({0}), c({0});
  int64_t strides[] = {7};
  a.dl()->strides = strides;
  c.dl()->strides = strides;
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), 0) << cinn_like_get_last_error();
}

TEST_F(X86Errors, NullArgumentArray) {
  EXPECT_EQ(fn_(nullptr, 3, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(),
              AllOf(HasSubstr("myadd"), HasSubstr("expected 3 tensor arguments"),
                    HasSubstr("got a null argument array")));
  EXPECT_EQ(fn_(nullptr, 0, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(), AllOf(HasSubstr("expected 3"), HasSubstr("got 0")));
}

/// One bad argument each, made from a good call: the entry returns -1, never reads through
/// the bad pointer, and names the function, the argument and what it expected.
TEST_F(X86Errors, EachMalformedTensorIsAnError) {
  struct Case {
    const char* what;
    std::function<void(DLTensor*)> spoil;  // applied to argument 1 (B)
    std::vector<std::string> expect;
  };
  static int64_t negative[] = {-8};
  static int64_t strides[] = {3};
  static int64_t huge[] = {int64_t{1} << 31};  // one past the 32-bit index range
  const std::vector<Case> cases = {
      {"null shape", [](DLTensor* t) { t->shape = nullptr; }, {"(B)", "null shape", "expected 1"}},
      {"null data", [](DLTensor* t) { t->data = nullptr; }, {"(B)", "null data", "[8]"}},
      {"negative size",
       [](DLTensor* t) { t->shape = negative; },
       {"(B)", "size -8 at dim 0", "expected a size >= 0"}},
      {"vector lanes",
       [](DLTensor* t) { t->dtype.lanes = 4; },
       {"(B)", "float32x4", "expected float32"}},
      {"int dtype",
       [](DLTensor* t) { t->dtype.code = kDLInt; },
       {"(B)", "int32", "expected float32"}},
      {"16 bits", [](DLTensor* t) { t->dtype.bits = 16; }, {"(B)", "float16", "expected float32"}},
      {"rank 0, null shape",
       [](DLTensor* t) { t->ndim = 0, t->shape = nullptr; },
       {"(B)", "rank 0", "expected rank 1"}},
      {"rank 3, null shape",
       [](DLTensor* t) { t->ndim = 3, t->shape = nullptr; },
       {"(B)", "rank 3", "expected rank 1"}},
      {"device",
       [](DLTensor* t) { t->device.device_type = kDLCUDAHost; },
       {"(B)", "is on device type 3", "expected cpu"}},
      {"strides",
       [](DLTensor* t) { t->strides = strides; },
       {"(B)", "stride 3 at dim 0, expected 1"}},
      {"past the index range",
       [](DLTensor* t) { t->shape = huge; },
       {"(B)", "shape [2147483648]", "more than 2147483647 elements"}},
  };
  for (const Case& c : cases) {
    HostTensor<float> a({8}), b({8}), out({8});
    c.spoil(b.dl());
    DLTensor* args[] = {a.dl(), b.dl(), out.dl()};
    cinn_like_clear_last_error();
    EXPECT_EQ(fn_(args, 3, nullptr), -1) << c.what;
    std::string message = cinn_like_get_last_error();
    EXPECT_THAT(message, HasSubstr("myadd: argument 1 (B)")) << c.what;
    for (const std::string& e : c.expect) EXPECT_THAT(message, HasSubstr(e)) << c.what;
  }
  HostTensor<float> a({8}), out({8});
  DLTensor* args[] = {a.dl(), nullptr, out.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("argument 1 (B) is a null DLTensor"));
}

// No element, no data needed: a call on empty tensors with null data is a no-op.
TEST_F(X86Errors, EmptyTensorsWithNullDataAreANoOp) {
  HostTensor<float> a({0}), b({0}), c({0});
  a.dl()->data = b.dl()->data = c.dl()->data = nullptr;
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), 0) << cinn_like_get_last_error();
}

TEST_F(X86Errors, WrongDevice) {
  HostTensor<float> a({8}), b({8}), c({8});
  c.dl()->device = {kDLCUDA, 0};
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(), AllOf(HasSubstr("(C)"), HasSubstr("expected cpu")));
}

TEST_F(X86Errors, MismatchedSymbolicDims) {
  HostTensor<float> a({10}), b({11}), c({10});
  b.FillRandom();
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), -1);
  EXPECT_THAT(cinn_like_get_last_error(),
              AllOf(HasSubstr("myadd"), HasSubstr("tensor B has size 11 at dim 0, expected 10")));
}

TEST_F(X86Errors, SymbolicDimOutsideInt32) {
  HostTensor<float> a({1}), b({1}), c({1});
  int64_t huge = int64_t{1} << 33;
  a.dl()->shape = &huge;
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  EXPECT_EQ(fn_(args, 3, nullptr), -1);
  // The tensor check sees it first: its element count is past the 32-bit index range.
  EXPECT_THAT(cinn_like_get_last_error(), AllOf(HasSubstr("argument 0 (A) has shape [8589934592]"),
                                                HasSubstr("32-bit indexing cannot address")));
}

TEST(X86BuildErrors, GpuBoundLoopIsRejected) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  ir::Var tx("threadIdx_x");
  auto module = testing::MakeModule("gpu_loop", {ir::Argument::Output(a)},
                                    ir::For::Make(tx, 0, n, ir::ForKind::kGpuThread,
                                                  ir::Store::Make(a, {tx}, ir::Expr(1.0f)), 0));
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  absl::Status s = (*compiler)->Build(module);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("gpu_loop"), HasSubstr("threadIdx_x"), HasSubstr("x86")));
  auto fn = (*compiler)->Lookup("gpu_loop");
  EXPECT_FALSE(fn.ok());
}

TEST(X86BuildErrors, UnflattenedIndexIsRejected) {
  auto a = ir::MakeBuffer("A", ir::Float(32), {4, 4});
  ir::Var i("i");
  auto module = testing::MakeModule(
      "unflat", {ir::Argument::Output(a)},
      ir::For::Make(i, 0, 4, ir::ForKind::kSerial, ir::Store::Make(a, {i, i}, ir::Expr(1.0f))));
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  absl::Status s = (*compiler)->Build(module);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(HasSubstr("store to A has 2 indices"), HasSubstr("flattening")));
}

TEST(X86BuildErrors, UnboundVariable) {
  auto a = ir::MakeBuffer("A", ir::Float(32), {4});
  ir::Var i("i"), stray("stray");
  auto module = testing::MakeModule("unbound", {ir::Argument::Output(a)},
                                    ir::For::Make(i, 0, 4, ir::ForKind::kSerial,
                                                  ir::Store::Make(a, {i + stray}, ir::Expr(1.0f))));
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  absl::Status s = (*compiler)->Build(module);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(HasSubstr("unbound"), HasSubstr("variable stray")));
}

TEST(X86BuildErrors, UnknownMathFunctionInsideAnExpression) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  ir::Var i("i");
  ir::Expr x = ir::Load::Make(a, {i});
  auto module = testing::MakeModule(
      "bad_math", {ir::Argument::Output(a)},
      ir::For::Make(
          i, 0, n, ir::ForKind::kSerial,
          ir::Store::Make(a, {i}, ir::Call::Make(ir::Float(32), "no_such_fn", {x}) * x + x)));
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  absl::Status s = (*compiler)->Build(module);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("bad_math"), HasSubstr("unknown math function no_such_fn")));
}

TEST(X86BuildErrors, NVGPUWithoutCuda) {
#ifdef CINN_LIKE_WITH_CUDA
  GTEST_SKIP() << "this build has CUDA";
#else
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_FALSE(compiler.ok());
  EXPECT_EQ(compiler.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(compiler.status().message(), HasSubstr("without the CUDA toolkit"));
#endif
}

}  // namespace
}  // namespace cinn_like::backends
