/// \file Philox4x32-10 (ir/philox.h) against the known-answer vectors of Random123 (Salmon et
/// al.), the generator's reference implementation, and the uniform's range and spread.
#include "ir/philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace cinn_like::ir {
namespace {

TEST(Philox, FirstWordMatchesRandom123KnownAnswers) {
  // philox4x32_10(counter, key): counter words (c0, c1, c2, c3) are (index lo, index hi, stream
  // lo, stream hi), key words (k0, k1) are (seed lo, seed hi).
  EXPECT_EQ(Philox4x32(0, 0, 0), 0x6627e8d5u);
  EXPECT_EQ(Philox4x32(~0ull, ~0ull, ~0ull), 0x408f276du);
  EXPECT_EQ(Philox4x32(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull),
            0xd16cfe09u);
}

TEST(Philox, UniformsFillTheUnitIntervalEvenly) {
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t seed = rng() >> 11, stream = rng() % 16;
  constexpr int kN = 1 << 16, kBins = 16;
  int bins[kBins] = {};
  double sum = 0;
  for (uint64_t i = 0; i < kN; ++i) {
    const float u = PhiloxUniform(seed, stream, i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ASSERT_EQ(u * 16777216.0f, std::floor(u * 16777216.0f)) << "a multiple of 2^-24";
    sum += u;
    ++bins[static_cast<int>(u * kBins)];
  }
  // Mean 1/2 with standard error 1/sqrt(12 N) ~ 0.0011; each bin N/16 = 4096 with sd ~ 62.
  EXPECT_NEAR(sum / kN, 0.5, 0.006) << "seed " << seed;
  for (int b = 0; b < kBins; ++b) EXPECT_NEAR(bins[b], kN / kBins, 400) << "bin " << b;
  // Another stream and another seed draw other numbers.
  EXPECT_NE(PhiloxUniform(seed, stream, 0), PhiloxUniform(seed, stream + 1, 0));
  EXPECT_NE(PhiloxUniform(seed, stream, 0), PhiloxUniform(seed + 1, stream, 0));
}

}  // namespace
}  // namespace cinn_like::ir
