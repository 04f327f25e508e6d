/// \file Every float16 and every bfloat16 value through the ops whose compute takes approximate
/// steps where the output is a 16-bit float (hlir/ops/elementwise_def.h, `rounded16`: sigmoid,
/// silu, tanh-gelu, with ir::FastExp and ir::FastRecip), against the reference interpreter's
/// float64 value rounded to the type: no result more than one unit in the last place away, and
/// fewer than one in a thousand one unit away. Shared by the x86 test and the GPU machine's.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "tests/op_cases.h"

namespace cinn_like::testing {

struct Rounded16Case {
  std::string op;
  AttributeMap attrs;
  /// The argument of the exp the op's compute takes at input x (its sigmoid's -x or -2u).
  double (*exp_arg)(double x);
};

inline std::vector<Rounded16Case> Rounded16Cases() {
  return {{"sigmoid", {}, [](double x) { return -x; }},
          {"silu", {}, [](double x) { return -x; }},
          {"gelu", {{"approximate", std::string("tanh")}}, [](double x) {
             return -2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
           }}};
}

/// The bits of element `i` of a 16-bit tensor.
inline uint16_t Bits16(TypedTensor& t, int64_t i) {
  uint16_t b;
  std::memcpy(&b, static_cast<char*>(t.data()) + 2 * i, 2);
  return b;
}

/// Where 16-bit float bits lie on the number line: neighbours differ by one, +0 and -0 are 0.
inline int OrderedBits16(uint16_t b) { return (b & 0x8000) ? -(b & 0x7fff) : b; }

/// Runs `c` on all 65536 bit patterns of `dtype` (infinities and NaNs included) and checks the
/// results as the file comment says. One exception, for bfloat16: a result may be 0 where the
/// exp of the op's sigmoid overflows float32 (e^88.73), in PyTorch's float32 computation too;
/// there the true value is below max(1, |x|) 2^-128.
inline void CheckEvery16BitValue(const Rounded16Case& c, DType dtype, const ir::Target& target,
                                 const Executor& exec) {
  constexpr int64_t n = 65536;
  const OpCase oc{c.op, {dtype}, {S({n})}, c.attrs, {}};
  SCOPED_TRACE(oc.Describe() + " on " + target.ToString());
  auto graph = CaseGraph(oc);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, target, "every16");
  ASSERT_TRUE(module.ok()) << module.status();
  const ir::Type t = hlir::ToIrType(dtype);
  TypedTensor in(t, {n}), out(t, {n}), want_bits(t, {n});
  hlir::HostTensor ref_in(dtype, {n});
  for (int64_t k = 0; k < n; ++k) {
    const uint16_t b = static_cast<uint16_t>(k);
    std::memcpy(static_cast<char*>(in.data()) + 2 * k, &b, 2);
    ref_in.data[k] = in.Get(k);
  }
  auto want = hlir::RunReference(*graph, {ref_in});
  ASSERT_TRUE(want.ok()) << want.status();
  for (int64_t k = 0; k < n; ++k) out.Set(k, -12345);  // poison
  std::vector<TypedTensor*> args{&in, &out};
  exec(*module, args);
  if (::testing::Test::HasFatalFailure()) return;

  int64_t one_off = 0, flushed = 0, bad = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double e = (*want)[0].data[k], g = out.Get(k);
    if (std::isnan(e) || std::isnan(g)) {
      if (std::isnan(e) != std::isnan(g) && ++bad <= 5) {
        ADD_FAILURE() << "input " << in.Get(k) << ": got " << g << ", want " << e;
      }
      continue;
    }
    want_bits.Set(k, e);
    const int d = std::abs(OrderedBits16(Bits16(out, k)) - OrderedBits16(Bits16(want_bits, k)));
    if (d == 1) ++one_off;
    if (d <= 1) continue;
    const double x = in.Get(k);
    const bool exp_overflows = c.exp_arg(x) > std::log(std::numeric_limits<float>::max());
    if (dtype == DType::kBFloat16 && g == 0 && exp_overflows) {
      ++flushed;
      continue;
    }
    if (++bad <= 5) {
      ADD_FAILURE() << "input " << in.Get(k) << ": got " << g << ", want " << e << " (" << d
                    << " units apart)";
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_LT(one_off, n / 1000) << "results one unit off";
  std::cout << oc.Describe() << " on " << target.ToString() << ": " << one_off << " of " << n
            << " one unit off, " << flushed << " given as 0 where float32's exp overflows\n";
}

}  // namespace cinn_like::testing
