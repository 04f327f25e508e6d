/// \file The simplifier, before and after.
#include "ir/transforms/simplify.h"

#include <gtest/gtest.h>

#include "ir/printer.h"

namespace cinn_like::ir {
namespace {

TEST(Simplify, FoldsConstantsAndIdentities) {
  Var x("x"), n("n");
  EXPECT_EQ(ToString(Simplify(Expr(3) + 4)), "7");
  EXPECT_EQ(ToString(Simplify(x * 1 + 0)), "x");
  EXPECT_EQ(ToString(Simplify((x + 3) + 4)), "(x + 7)");
  EXPECT_EQ(ToString(Simplify(2 * x)), "(x * 2)");
  EXPECT_EQ(ToString(Simplify((n + 63) / 64)), "((n + 63) / 64)");
  EXPECT_EQ(ToString(Simplify((x * 64 + 5) / 64)), "x");  // 5 / 64 == 0 for non-negative x
  EXPECT_EQ(ToString(Simplify((x * 64 + 5) % 64)), "5");
  EXPECT_EQ(ToString(Simplify(Expr(7) / 2)), "3");
  EXPECT_EQ(ToString(Simplify(Expr(-7) / 2)), "-3");  // C truncation
}

TEST(Simplify, LoopBoundsDecideGuards) {
  Var i("i"), j("j"), n("n");
  Buffer c = MakeBuffer("C", Float(32), {Expr(1024)});
  Stmt store = Store::Make(c, {i * 32 + j}, FloatImm::Make(Float(32), 1));
  Stmt always = For::Make(i, 0, 32, ForKind::kSerial,
                          For::Make(j, 0, 32, ForKind::kSerial,
                                    IfThenElse::Make(i * 32 + j < 1024, store)));
  EXPECT_EQ(ToString(Simplify(always)).find("if"), std::string::npos);
  Stmt maybe = For::Make(i, 0, 32, ForKind::kSerial, IfThenElse::Make(i * 32 < n, store));
  EXPECT_NE(ToString(Simplify(maybe)).find("if (((i * 32) < n))"), std::string::npos);
}

TEST(Simplify, RampAlgebra) {
  Var i("i");
  Expr e = Broadcast::Make(i * 256, 8) + Ramp::Make(Expr(0), Expr(1), 8);
  EXPECT_EQ(ToString(Simplify(e)), "ramp((i * 256), 1, 8)");
  Expr m = Ramp::Make(i, Expr(1), 4) * Broadcast::Make(Expr(2), 4);
  EXPECT_EQ(ToString(Simplify(m)), "ramp((i * 2), 2, 4)");
}

}  // namespace
}  // namespace cinn_like::ir
