/// \file Symbolic sizes: one canonical text per polynomial, arithmetic, exact division (a
/// reshape's -1), evaluation, and parse errors that say what is wrong.
#include "hlir/sym_expr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlir/shape.h"

namespace cinn_like::hlir {
namespace {

using ::testing::HasSubstr;

SymExpr P(const std::string& text) {
  auto e = SymExpr::Parse(text);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : SymExpr();
}

TEST(SymExpr, EqualPolynomialsPrintAlike) {
  EXPECT_EQ(P("s1*s0 + s0").ToString(), "s0*s1 + s0");
  EXPECT_EQ(P("s0*(s1 + 1)").ToString(), "s0*s1 + s0");
  EXPECT_EQ(P("(s0 + 1)*(s0 - 1)").ToString(), "s0*s0 - 1");
  EXPECT_EQ(P("2*s0 - s0 - s0").ToString(), "0");
  EXPECT_EQ(P("-s0 + 4").ToString(), "-s0 + 4");
  EXPECT_EQ(P(" 768 * s0*s1 ").ToString(), "768*s0*s1");
  EXPECT_EQ(P("s0*s1 + 2*s0 - 1"), P("s0*(s1 + 2) - 1"));
  EXPECT_EQ(P("n").AsSymbol(), "n");
  EXPECT_FALSE(P("2*n").AsSymbol().has_value());
  EXPECT_TRUE(P("3*4 - 2").is_constant());
  EXPECT_EQ(P("3*4 - 2").constant(), 10);
}

TEST(SymExpr, DimsOfEqualPolynomialsAreEqual) {
  auto a = Dim::Parse("s1*s0");
  auto b = Dim::Parse("s0*s1");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  auto c = Dim::Parse("2*(s0 + 1) - 2*s0");  // a constant is a known dim
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->is_symbolic());
  EXPECT_EQ(c->value, 2);
  EXPECT_EQ(ElementCount({Dim::Symbol("s0"), Dim::Symbol("s1"), Dim::Known(64)}).ToString(),
            "64*s0*s1");
}

TEST(SymExpr, DividesOnlyExactly) {
  auto q = P("64*s0*s1 + 128*s0").DivideExactly(P("64*s0"));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->ToString(), "s1 + 2");
  EXPECT_FALSE(P("64*s0*s1 + 3").DivideExactly(P("64")).has_value());  // 3 / 64
  EXPECT_FALSE(P("s0*s1").DivideExactly(P("s2")).has_value());         // no s2 in the term
  EXPECT_FALSE(P("s0").DivideExactly(P("s0 + 1")).has_value());        // not one term
  EXPECT_FALSE(P("s0").DivideExactly(P("0")).has_value());
}

TEST(SymExpr, EvaluatesWithBoundSymbols) {
  auto v = P("s0*s1 + 2*s0 - 1").Evaluate({{"s0", 3}, {"s1", 5}});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 20);
  auto unbound = P("s0*s1").Evaluate({{"s0", 3}});
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(unbound.status().message(), HasSubstr("symbol s1 is not bound"));
  auto big = P("s0*s0*s0").Evaluate({{"s0", int64_t{1} << 30}});
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("overflows int64"));
}

TEST(SymExpr, BadTextSaysWhatIsWrong) {
  for (const char* text : {"", "s0 +", "s0 / 2", "(s0", "s0 s1", "99999999999999999999", "s0)"}) {
    auto e = SymExpr::Parse(text);
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_THAT(e.status().message(), HasSubstr("symbolic size \"")) << text;
  }
  std::string product;  // 2^11 terms once expanded
  for (int i = 0; i < 11; ++i) product += absl::StrCat(i ? "*" : "", "(a", i, " + b", i, ")");
  auto wide = SymExpr::Parse(product);
  ASSERT_FALSE(wide.ok());
  EXPECT_THAT(wide.status().message(), HasSubstr("more than 1024 terms"));
  std::string deep(100, '(');
  EXPECT_FALSE(SymExpr::Parse(deep + "s0" + std::string(100, ')')).ok());
  // A coefficient past int64 from arithmetic prints as no parse accepts and does not evaluate.
  SymExpr huge = P("4611686018427387904*s0") * SymExpr::Constant(4);
  EXPECT_TRUE(huge.overflowed());
  EXPECT_FALSE(SymExpr::Parse(huge.ToString()).ok());
  EXPECT_FALSE(huge.Evaluate({{"s0", 1}}).ok());
}

}  // namespace
}  // namespace cinn_like::hlir
