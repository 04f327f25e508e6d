/// \file Lowering of the seed schedules: each lowers to the loop nest its schedule promises.
#include "ir/lower.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cinn_like/examples.h"
#include "ir/printer.h"

namespace cinn_like::ir {
namespace {

std::string LowerExample(const std::string& name, const Target& target) {
  auto ex = examples::Find(name);
  EXPECT_TRUE(ex.ok()) << ex.status();
  auto f = ex->build(target);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? ToString((*f)->body) : "";
}

TEST(Lower, PrintAll) {
  for (auto& e : examples::All()) {
    std::cout << "=== " << e.name << " x86\n" << LowerExample(e.name, Target::X86());
    std::cout << "=== " << e.name << " nvgpu\n" << LowerExample(e.name, Target::NVGPU(90));
  }
}

}  // namespace
}  // namespace cinn_like::ir
