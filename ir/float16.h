/// \file float16 and bfloat16 on the host: bit conversions that round to nearest even, and
/// rounding a double to the value set of any float type (constant folding, MakeConst).
#pragma once

#include <cstdint>

#include "ir/type.h"

namespace cinn_like::ir {

/// IEEE binary16 bits of `f`, rounded to nearest even (overflow to inf, NaN stays NaN).
uint16_t FloatToHalfBits(float f);
/// The float value of IEEE binary16 bits (exact).
float HalfBitsToFloat(uint16_t h);
/// bfloat16 bits of `f`, rounded to nearest even (NaN stays a quiet NaN).
uint16_t FloatToBFloat16Bits(float f);
/// The float value of bfloat16 bits (exact).
float BFloat16BitsToFloat(uint16_t b);
/// `d` rounded to float with round-to-odd: truncate toward zero, then set the last mantissa
/// bit when inexact. A later round-to-nearest-even to 16 bits then equals one direct rounding
/// of `d` (float keeps more than 11 + 2 mantissa bits), which avoids double rounding.
float DoubleToFloatRoundToOdd(double d);
/// `v` rounded (to nearest even) to the nearest value of float type `t`: float16, bfloat16,
/// float32; float64 and non-float types return `v` unchanged.
double RoundToType(const Type& t, double v);

}  // namespace cinn_like::ir
