/// \file Every intrinsic of ir/intrinsics.h against the LLVM host code generators: x86 and the
/// CUDA host emit the ones of their side (typed dispatch on IntrinsicOp; philox_uniform in
/// integer instructions, no call left) and refuse the others with a message naming the
/// intrinsic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "backends/llvm/host_ir.h"
#include "tests/backends/host_funcs.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// A host entry storing a call of `op` with arguments of the shape its family takes.
ir::Module CallOf(ir::IntrinsicOp op) {
  auto a = ir::MakeBuffer("A", ir::Float(32), {ir::Expr(8)});
  auto c = ir::MakeBuffer("C", ir::Float(32), {ir::Expr(1)});
  std::vector<ir::Expr> args;
  if (ir::IsVectorReduce(op)) {
    args = {ir::Load::Make(a, {ir::Ramp::Make(ir::Expr(0), ir::Expr(1), 8)})};
  } else if (op == ir::IntrinsicOp::kExternCall) {
    args = {ir::StringImm::Make("cinn_like_some_library_call"), a->data, c->data};
  } else if (op == ir::IntrinsicOp::kLaunchKernel) {
    args = {ir::StringImm::Make("k"), 1, 1, 1, 32, 1, 1, 0, a->data, c->data};
  } else if (op == ir::IntrinsicOp::kPhiloxUniform) {  // (seed, stream, index), int64 each
    args = {ir::Expr(int64_t{7}), ir::Expr(int64_t{1}), ir::Expr(int64_t{3})};
  } else {
    args = {ir::Load::Make(a, {ir::Expr(0)})};
  }
  ir::Type t = op == ir::IntrinsicOp::kExternCall || op == ir::IntrinsicOp::kLaunchKernel
                   ? ir::Int(32)
                   : ir::Float(32);
  ir::Expr call = ir::Call::Make(t, op, args);
  ir::Stmt body = t.is_float() ? ir::Store::Make(c, {ir::Expr(0)}, call) : ir::Evaluate::Make(call);
  return testing::MakeModule("f", {ir::Argument::Input(a), ir::Argument::Output(c)}, body);
}

void ExpectSpelledOrRefused(const std::set<ir::IntrinsicOp>& supported, bool cuda_host) {
  for (int k = 0; k < ir::kNumIntrinsics; ++k) {
    auto op = static_cast<ir::IntrinsicOp>(k);
    std::string name = ir::IntrinsicName(op);
    ir::Module m = CallOf(op);
    auto ir = cuda_host ? CudaHostIR(m) : X86HostIR(m);
    if (supported.count(op)) {
      EXPECT_TRUE(ir.ok()) << name << ": " << ir.status();
      if (ir.ok()) EXPECT_THAT(*ir, Not(HasSubstr(name + "("))) << name;
    } else {
      ASSERT_FALSE(ir.ok()) << name;
      EXPECT_THAT(ir.status().message(),
                  HasSubstr("intrinsic call '" + name + "' is not supported by this target"));
    }
  }
}

const std::set<ir::IntrinsicOp> kCpuIntrinsics = {
    ir::IntrinsicOp::kVectorReduceSum, ir::IntrinsicOp::kVectorReduceMax,
    ir::IntrinsicOp::kVectorReduceMin, ir::IntrinsicOp::kVectorReduceProd,
    ir::IntrinsicOp::kExternCall,      ir::IntrinsicOp::kPhiloxUniform};

TEST(IntrinsicsCodegen, X86EmitsTheCpuIntrinsicsAndRefusesTheRest) {
  ExpectSpelledOrRefused(kCpuIntrinsics, /*cuda_host=*/false);
}

TEST(IntrinsicsCodegen, CudaHostAlsoEmitsTheKernelLaunch) {
  std::set<ir::IntrinsicOp> host = kCpuIntrinsics;
  host.insert(ir::IntrinsicOp::kLaunchKernel);
  ExpectSpelledOrRefused(host, /*cuda_host=*/true);
  auto ir = CudaHostIR(CallOf(ir::IntrinsicOp::kLaunchKernel));
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, HasSubstr("call i32 @cinn_like_cuda_launch("));
}

}  // namespace
}  // namespace cinn_like::backends
