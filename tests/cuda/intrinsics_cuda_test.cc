/// \file Every intrinsic of ir/intrinsics.h in CUDA device code: the device ones have a CUDA
/// spelling (the block reduces a helper the translation unit defines, the vector reduces their
/// lanes combined); the host ones are refused with a message naming the intrinsic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "backends/cuda/codegen_cuda_dev.h"
#include "tests/cuda/vector_add_module.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

/// A kernel over 32 threads storing a call of `op`; only the spelling matters here, so every
/// op gets one float32 argument.
absl::StatusOr<std::string> KernelCalling(ir::IntrinsicOp op) {
  auto out = ir::MakeBuffer("Out", ir::Float(32), {ir::Expr(32)});
  ir::Var tx("tx");
  ir::Expr call = ir::Call::Make(ir::Float(32), op, {ir::Load::Make(out, {tx})});
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "k";
  f->args = {ir::Argument::Output(out)};
  f->body = ir::For::Make(tx, 0, 32, ir::ForKind::kGpuThread, ir::Store::Make(out, {tx}, call), 0);
  return CodeGenCudaDev::Generate(testing::SplitGpuModule("k", {f}));
}

TEST(IntrinsicsCuda, DeviceIntrinsicsAreSpelledAndTheOthersRefused) {
  const std::map<ir::IntrinsicOp, std::string> spelled = {
      {ir::IntrinsicOp::kSyncThreads, "__syncthreads("},
      {ir::IntrinsicOp::kBlockReduceSum, "cinn_like_block_reduce_sum<32>("},
      {ir::IntrinsicOp::kBlockReduceMax, "cinn_like_block_reduce_max<32>("},
      {ir::IntrinsicOp::kBlockReduceMin, "cinn_like_block_reduce_min<32>("},
      {ir::IntrinsicOp::kBlockReduceProd, "cinn_like_block_reduce_prod<32>("},
      {ir::IntrinsicOp::kPhiloxUniform, "cinn_like_philox_uniform("}};
  for (int k = 0; k < ir::kNumIntrinsics; ++k) {
    auto op = static_cast<ir::IntrinsicOp>(k);
    if (op == ir::IntrinsicOp::kThreadIndex) continue;  // an index, below
    if (ir::IsVectorReduce(op)) continue;               // lanes combined, below
    std::string name = ir::IntrinsicName(op);
    auto src = KernelCalling(op);
    auto it = spelled.find(op);
    if (it == spelled.end()) {
      ASSERT_FALSE(src.ok()) << name;
      EXPECT_THAT(src.status().message(), HasSubstr("intrinsic " + name + " in CUDA codegen"));
      continue;
    }
    ASSERT_TRUE(src.ok()) << name << ": " << src.status();
    EXPECT_THAT(*src, HasSubstr("Out[tx] = " + it->second + "Out[tx])")) << *src;
    if (op == ir::IntrinsicOp::kPhiloxUniform) {  // the helper is defined in the unit
      EXPECT_THAT(*src, HasSubstr("float cinn_like_philox_uniform(int64_t seed")) << *src;
    }
    if (ir::IsBlockReduce(op)) {  // the helper is defined in the translation unit
      const std::string helper = it->second.substr(0, it->second.find('<'));
      EXPECT_THAT(*src, HasSubstr("T " + helper + "(T v)")) << *src;
    }
  }
}

TEST(IntrinsicsCuda, VectorReducesCombineTheLanesOfOneVectorLoad) {
  // Out[tx] = Out[tx] + vector_reduce_sum(In[ramp(4 * tx + offset, 1, 4)]): one float4 load,
  // its lanes summed in order. At offset 0 the host guarantees the alignment (no scalar path);
  // at offset 1 the statement tests its address and falls back to four scalar loads.
  for (int offset : {0, 1}) {
    auto in = ir::MakeBuffer("In", ir::Float(32), {ir::Expr(129)});
    auto out = ir::MakeBuffer("Out", ir::Float(32), {ir::Expr(32)});
    ir::Var tx("tx");
    ir::Expr base = offset ? tx * 4 + offset : tx * 4;
    ir::Expr lanes = ir::Load::Make(in, {ir::Ramp::Make(base, ir::Expr(1), 4)});
    const std::string first = offset ? "tx * 4 + 1" : "tx * 4";
    const std::string last = offset ? "In[tx * 4 + 4]" : "In[tx * 4 + 3]";
    for (auto [op, combine] : {std::pair{ir::IntrinsicOp::kVectorReduceSum, std::string(" + ")},
                               std::pair{ir::IntrinsicOp::kVectorReduceMax, std::string("max(")}}) {
      SCOPED_TRACE(offset);
      ir::Expr total = ir::Call::Make(ir::Float(32), op, {lanes});
      ir::Expr acc = ir::Load::Make(out, {tx});
      ir::Expr update =
          op == ir::IntrinsicOp::kVectorReduceSum ? acc + total : ir::Max::Make(acc, total);
      auto f = std::make_shared<ir::LoweredFuncNode>();
      f->name = "k";
      f->args = {ir::Argument::Input(in), ir::Argument::Output(out)};
      f->body =
          ir::For::Make(tx, 0, 32, ir::ForKind::kGpuThread, ir::Store::Make(out, {tx}, update), 0);
      auto src = CodeGenCudaDev::Generate(testing::SplitGpuModule("k", {f}));
      ASSERT_TRUE(src.ok()) << src.status();
      EXPECT_THAT(*src,
                  HasSubstr("float4 In_v0 = *reinterpret_cast<const float4*>(&In[" + first + "]);"))
          << *src;
      EXPECT_THAT(*src, HasSubstr("In_v0.w")) << *src;
      if (offset) {
        EXPECT_THAT(*src, HasSubstr(last)) << *src;  // the scalar path
      } else {
        EXPECT_THAT(*src, ::testing::Not(HasSubstr(last))) << *src;
      }
      EXPECT_THAT(*src, HasSubstr(combine)) << *src;
      EXPECT_THAT(*src, ::testing::Not(HasSubstr("vector_reduce"))) << *src;
    }
  }
}

TEST(IntrinsicsCuda, ThreadIndexIsTheBuiltinOfItsAxis) {
  ir::Var tx("tx");
  auto kernel = [&](ir::Expr axis) {
    auto out = ir::MakeBuffer("Out", ir::Int(32), {ir::Expr(32)});
    ir::Expr index = ir::Call::Make(ir::Int(32), ir::IntrinsicOp::kThreadIndex, {axis});
    auto f = std::make_shared<ir::LoweredFuncNode>();
    f->name = "k";
    f->args = {ir::Argument::Output(out)};
    f->body =
        ir::For::Make(tx, 0, 32, ir::ForKind::kGpuThread, ir::Store::Make(out, {tx}, index), 0);
    return CodeGenCudaDev::Generate(testing::SplitGpuModule("k", {f}));
  };
  auto src = kernel(ir::Expr(1));
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("Out[tx] = static_cast<int32_t>(threadIdx.y);")) << *src;
  auto bad = kernel(tx);  // not a constant
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("thread_index needs one constant axis"));
}

}  // namespace
}  // namespace cinn_like::backends
