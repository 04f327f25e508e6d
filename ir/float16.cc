/// \file Host-side float16/bfloat16 conversions, round to nearest even.
#include "ir/float16.h"

#include <cmath>
#include <cstring>

namespace cinn_like::ir {
namespace {

uint32_t Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  return x;
}

float FromBits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

}  // namespace

uint16_t FloatToHalfBits(float f) {
  uint32_t x = Bits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return sign | (x > 0x7f800000u ? 0x7e00 : 0x7c00);  // NaN, inf
  if (x >= 0x477ff000u) return sign | 0x7c00;  // 65520 and above round to inf
  if (x < 0x38800000u) {
    // Below the smallest normal half (2^-14): the subnormal mantissa is |f| * 2^24, rounded
    // to nearest even (exact scaling; nearbyint uses the default round-to-nearest-even mode).
    float scaled = std::fabs(f) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t h = (x >> 13) - (112u << 10);  // rebias the exponent 127 -> 15
  uint32_t rest = x & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may bump the exponent
  return sign | static_cast<uint16_t>(h);
}

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0) {
    float v = std::ldexp(static_cast<float>(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) return FromBits(sign | 0x7f800000u | (m << 13));
  return FromBits(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t FloatToBFloat16Bits(float f) {
  uint32_t x = Bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float BFloat16BitsToFloat(uint16_t b) { return FromBits(static_cast<uint32_t>(b) << 16); }

float DoubleToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  uint32_t x = Bits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --x;  // rounded away from zero
  return FromBits(x | 1u);
}

double RoundToType(const Type& t, double v) {
  if (t.is_float16()) return HalfBitsToFloat(FloatToHalfBits(DoubleToFloatRoundToOdd(v)));
  if (t.is_bfloat16()) return BFloat16BitsToFloat(FloatToBFloat16Bits(DoubleToFloatRoundToOdd(v)));
  if (t.is_float() && t.bits() == 32) return static_cast<float>(v);
  return v;
}

}  // namespace cinn_like::ir
