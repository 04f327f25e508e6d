/// \file The library calls' typed arguments (ir/library_calls.h) and the attention kernels'
/// description (ir/attention_kernel_spec.h): one order and one form, read back as written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "ir/attention_kernel_spec.h"
#include "ir/library_calls.h"

namespace cinn_like::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LibraryCalls, TheListIsTheFieldsInTheRuntimeFunctionsOrder) {
  ir::MatmulArgs<int64_t> mm;
  mm.has_bias = 1, mm.dtype = 2, mm.batch = 3, mm.m = 4, mm.n = 5, mm.k = 6;
  mm.trans_a = 7, mm.trans_b = 8, mm.batch_stride_a = 9, mm.batch_stride_b = 10;
  mm.activation = 11;
  EXPECT_THAT(ir::ArgList(mm), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  EXPECT_THAT(ir::ArgList(mm, /*epilogue=*/true), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  EXPECT_EQ(ir::ArgCount<ir::MatmulArgs>(false), 10u);
  EXPECT_EQ(ir::ArgCount<ir::Conv2dArgs>(false), 18u);
  EXPECT_EQ(ir::ArgCount<ir::Conv2dArgs>(true), 19u);
  EXPECT_EQ(ir::ArgCount<ir::Conv2dGradArgs>(false), 17u);
}

TEST(LibraryCalls, ArgumentsReadBackAsWrittenAndAWrongCountIsAnError) {
  std::mt19937_64 rng(std::random_device{}());
  std::vector<int64_t> list(19);
  for (int64_t& v : list) v = static_cast<int64_t>(rng() % 1000);
  auto conv = ir::ArgsFromList<ir::Conv2dArgs>(list, /*epilogue=*/true, "conv2d");
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ(conv->has_bias, list[0]);
  EXPECT_EQ(conv->w, list[5]);
  EXPECT_EQ(conv->out_w, list[10]);
  EXPECT_EQ(conv->groups, list[17]);
  EXPECT_EQ(conv->activation, list[18]);
  EXPECT_EQ(ir::ArgList(*conv, true), list);
  auto grad = ir::ArgsFromList<ir::Conv2dGradArgs>(list, false, "conv2d gradient");
  ASSERT_FALSE(grad.ok());
  EXPECT_THAT(std::string(grad.status().message()),
              HasSubstr("the conv2d gradient call takes 17 integer arguments, not 19"));
  auto all = ir::ArgsAll<ir::MatmulArgs>(int64_t{-1});
  for (int64_t v : ir::ArgList(all, true)) EXPECT_EQ(v, -1);
}

TEST(AttentionKernelSpec, NamesParseBackToTheSameKernel) {
  for (bool grad : {false, true}) {
    for (const char* mask : {"none", "bool", "bfloat16"}) {
      ir::AttentionKernelSpec spec;
      spec.grad = grad, spec.dtype = "float16", spec.mask = mask;
      spec.head_dim = 64, spec.rows = 32, spec.keys = 16;
      spec.tensor_cores = !grad, spec.dropout = grad;
      const std::string name = spec.Name();
      EXPECT_TRUE(ir::AttentionKernelSpec::IsAttention(name));
      EXPECT_EQ(ir::AttentionKernelSpec::IsAttentionGrad(name), grad);
      auto back = ir::AttentionKernelSpec::Parse(name);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(back->Name(), name);
      EXPECT_EQ(back->grad, grad);
      EXPECT_EQ(back->mask, mask);
      EXPECT_EQ(back->TilePart(), "d64_q32_k16");
      EXPECT_EQ(back->tensor_cores, !grad);
      EXPECT_EQ(back->dropout, grad);
    }
  }
  EXPECT_EQ(ir::AttentionKernelSpec{}.Name(), "cinn_like_attention_float32_none_d0_q0_k0");
  for (const char* bad : {"cinn_like_attention_float32_none_dx_q32_k32",
                          "cinn_like_attention_float32_none_d64_q32", "another_kernel"}) {
    auto s = ir::AttentionKernelSpec::Parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("malformed name"));
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(bad));
  }
}

}  // namespace
}  // namespace cinn_like::testing
