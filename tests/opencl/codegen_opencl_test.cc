/// \file OpenCL C from hand-scheduled functions, built by the device's compiler and run on it:
/// what the C printer shares with CUDA, here the scopes of local arrays.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backends/compiler.h"
#include "tests/opencl/opencl_executor.h"
#include "tests/typed_kernels.h"
#include "tests/unrolled_sums_module.h"

namespace cinn_like::testing {
namespace {

TEST(CodeGenOpenCL, CopiesOfABlockedSumDeclareTheirPartialsInScopesOfTheirOwn) {
  // Each copy of the unrolled loop's body allocates C_block and C_tail beside the other copy's:
  // one C scope held both declarations, and the build failed (redefinition of 'C_tail').
  auto f = UnrolledBlockedSums(OpenCLTarget());
  ASSERT_TRUE(f.ok()) << f.status();
  const ir::Module module{"unrolled_sums", OpenCLTarget(), {*f}};
  constexpr int64_t kRows = 5, kLength = kUnrolledSumsLength;
  TypedTensor a(ir::Float(32), {kRows, 2, kLength}), c(ir::Float(32), {kRows, 2});
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> dist(-8, 8);  // small integers: every float32 sum exact
  for (int64_t e = 0; e < a.size(); ++e) a.Set(e, dist(rng));
  std::vector<TypedTensor*> args = {&a, &c};
  RunOnOpenCL(module, args);
  if (HasFatalFailure()) return;
  for (int64_t r = 0; r < kRows * 2; ++r) {
    double want = 0;
    for (int64_t e = 0; e < kLength; ++e) want += a.Get(r * kLength + e);
    EXPECT_EQ(c.Get(r), want) << "row " << r / 2 << ", column " << r % 2;
  }
}

}  // namespace
}  // namespace cinn_like::testing
