/// \file Philox4x32-10, the counter-based random generator of random ops (dropout, rand_like,
/// bernoulli): the one statement of the algorithm, which the reference interpreter runs and
/// every backend's spelling of the philox_uniform intrinsic (ir/intrinsics.h) must equal bit for
/// bit (tests compare compiled masks with the reference's exactly).
///
/// Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11), the generator of
/// curand and of PyTorch's and Triton's random ops. The counter is (index, stream) as four
/// 32-bit words, low words first; the key is the 64-bit seed. Ten rounds; each round multiplies
/// words 0 and 2 by the Philox constants, crosses the high halves with words 1 and 3 and the
/// key, and the key is bumped by the Weyl constants between rounds. The first output word's top
/// 24 bits make a float32 uniform on [0, 1) (a multiple of 2^-24, exact in every backend).
#pragma once

#include <cstdint>

namespace cinn_like::ir {

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

/// The first 32-bit word of Philox4x32-10 at counter (index, stream) under key `seed`.
constexpr uint32_t Philox4x32(uint64_t seed, uint64_t stream, uint64_t index) {
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32);
  uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int r = 0; r < kPhiloxRounds; ++r) {
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return c0;
}

/// The float32 uniform on [0, 1) of philox_uniform(seed, stream, index): the top 24 bits of
/// Philox4x32's first word times 2^-24.
constexpr float PhiloxUniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<float>(Philox4x32(seed, stream, index) >> 8) * 0x1p-24f;
}

}  // namespace cinn_like::ir
