/// \file GPU machine only: static tensors past 2^31 - 1 elements (dims each within int32) are
/// lowered with 64-bit indices on the GPU too (kernels' thread ids and flat indices, the
/// host's launch sizes): an elementwise-broadcast chain and row and column reductions over
/// int8[2, 32768, 32771] (2 GiB) compared element for element with the same arithmetic here.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/fusion_cases.h"
#include "tests/gpu/device_buffer.h"

namespace cinn_like::testing {
namespace {

constexpr int64_t kA = 2, kB = 32768, kC = 32771;  // 2^31 + 2^17 elements

TEST(WideIndexGpu, TensorsPastTwoToTheThirtyOneElements) {
  auto module = CompileProgramModule(WideInt8(kA, kB, kC), ir::Target::NVGPU(), "wide");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto built = (*compiler)->Build(*module);
  ASSERT_TRUE(built.ok()) << built;
  auto fn = (*compiler)->Lookup("wide");
  ASSERT_TRUE(fn.ok()) << fn.status();

  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(seed);
  std::mt19937 rng(seed);
  const int64_t n = kA * kB * kC;
  std::vector<int8_t> hx(n), hbias(kC);
  std::uniform_int_distribution<int> dist(-100, 99), small(-20, 19);
  for (auto& v : hx) v = static_cast<int8_t>(dist(rng));
  for (auto& v : hbias) v = static_cast<int8_t>(small(rng));
  DeviceBuffer dx(n), dbias(kC), dy(n), drows(kA * kB), dcols(kB * kC);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_device(dx.get(), hx.data(), n), 0);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_device(dbias.get(), hbias.data(), kC), 0);
  std::vector<int64_t> xs{kA, kB, kC}, bs{kC}, rs{kA, kB}, cs{kB, kC};
  DLTensor tx = DeviceTensor(dx.get(), xs, {kDLInt, 8, 1});
  DLTensor tb = DeviceTensor(dbias.get(), bs, {kDLInt, 8, 1});
  DLTensor ty = DeviceTensor(dy.get(), xs, {kDLInt, 8, 1});
  DLTensor tr = DeviceTensor(drows.get(), rs, {kDLInt, 8, 1});
  DLTensor tc = DeviceTensor(dcols.get(), cs, {kDLInt, 8, 1});
  DLTensor* args[] = {&tx, &tb, &ty, &tr, &tc};
  ASSERT_EQ((*fn)(args, 5, nullptr), 0) << cinn_like_get_last_error();
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();

  std::vector<int8_t> y(n), rows(kA * kB), cols(kB * kC);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_host(y.data(), dy.get(), n), 0);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_host(rows.data(), drows.get(), rows.size()), 0);
  ASSERT_EQ(cinn_like_cuda_memcpy_to_host(cols.data(), dcols.get(), cols.size()), 0);
  int64_t wrong = 0, first = -1;
  for (int64_t k = 0; k < n; ++k) {
    const int8_t want = static_cast<int8_t>(std::max<int>(hx[k], 0) + hbias[k % kC]);
    if (y[k] != want && wrong++ == 0) first = k;
  }
  EXPECT_EQ(wrong, 0) << "first wrong element of add(relu(x), bias): " << first;
  for (int64_t r = 0; r < kA * kB; ++r) {
    const int8_t want = *std::max_element(hx.begin() + r * kC, hx.begin() + (r + 1) * kC);
    ASSERT_EQ(rows[r], want) << "reduce_max row " << r;
  }
  for (int64_t c = 0; c < kB * kC; ++c) {
    ASSERT_EQ(cols[c], std::min(hx[c], hx[c + kB * kC])) << "reduce_min column " << c;
  }
}

}  // namespace
}  // namespace cinn_like::testing
