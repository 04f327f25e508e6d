/// \file The intrinsic list: names, families, and calls that carry their IntrinsicOp through
/// rewriting.
#include "ir/intrinsics.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ir/ir.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/tensor.h"

namespace cinn_like::ir {
namespace {

TEST(Intrinsics, EveryOpHasItsOwnName) {
  std::set<std::string> names;
  for (int k = 0; k < kNumIntrinsics; ++k) {
    names.insert(IntrinsicName(static_cast<IntrinsicOp>(k)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumIntrinsics));
  EXPECT_STREQ(IntrinsicName(IntrinsicOp::kSyncThreads), "sync_threads");
  EXPECT_TRUE(IsBlockReduce(IntrinsicOp::kBlockReduceProd));
  EXPECT_FALSE(IsBlockReduce(IntrinsicOp::kVectorReduceSum));
  EXPECT_TRUE(IsVectorReduce(IntrinsicOp::kVectorReduceMin));
  EXPECT_FALSE(IsVectorReduce(IntrinsicOp::kReduceSum));
}

TEST(Intrinsics, ACallCarriesItsOpThroughAMutatorAndPrintsByListName) {
  Var x("x", Float(32));
  Expr call = Call::Make(Float(32), IntrinsicOp::kBlockReduceMax, {x + 1.0f});
  struct Renamer : IRMutator {
    Var to{"y", Float(32)};
    Expr MutateVariable(const Variable* op, const Expr& self) override { return to; }
  } renamer;
  Expr out = renamer.Mutate(call);
  ASSERT_FALSE(out.same_as(call));
  auto* c = out.As<Call>();
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->is_intrinsic(IntrinsicOp::kBlockReduceMax));
  EXPECT_EQ(c->call_kind, Call::CallKind::kIntrinsic);
  EXPECT_EQ(ToString(out), "block_reduce_max((y + 1.0f))");
  // A math call is no intrinsic.
  Expr math = Call::Make(Float(32), "exp", {x});
  EXPECT_FALSE(math.As<Call>()->intrinsic.has_value());
  EXPECT_EQ(math.As<Call>()->call_kind, Call::CallKind::kPure);
}

TEST(Intrinsics, ReduceMarkersBecomeTheTensorsReduceKind) {
  Tensor a = Placeholder("A", Float(32), {8, 4});
  IterVar k = ReduceAxis(4);
  Tensor m = Compute(
      {8}, [&](const std::vector<Expr>& i) { return ReduceProd(a(i[0], k.var), {k}); }, "M");
  EXPECT_EQ(m->reduce, ReduceKind::kProd);
  ASSERT_EQ(m->reduce_axes.size(), 1u);
  EXPECT_EQ(ExternCall("f", {}).As<Evaluate>()->value.As<Call>()->intrinsic,
            IntrinsicOp::kExternCall);
}

}  // namespace
}  // namespace cinn_like::ir
