/// \file The IR printer's text for each kind of node.
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace cinn_like::ir {
namespace {

TEST(Printer, ExpressionsAndLoops) {
  Var n("n"), i("i");
  Buffer a = MakeBuffer("A", Float(32), {n});
  Buffer c = MakeBuffer("C", Float(32), {n});
  Stmt body = Store::Make(c, {i}, Load::Make(a, {i}) * 2.0f);
  Stmt loop = For::Make(i, 0, n, ForKind::kSerial, IfThenElse::Make(i < n, body));
  EXPECT_EQ(ToString(loop),
            "for (i, 0, n) {\n"
            "  if ((i < n)) {\n"
            "    C[i] = (A[i] * 2.0f)\n"
            "  }\n"
            "}\n");
  Stmt bound = For::Make(i, 0, 64, ForKind::kGpuThread, body, 0);
  EXPECT_EQ(ToString(bound).substr(0, 29), "threadIdx.x for (i, 0, 64) {\n");
  EXPECT_EQ(ToString(min(i, n) + Ramp::Make(i, 1, 8).type().lanes()), "(min(i, n) + 8)");
}

}  // namespace
}  // namespace cinn_like::ir
