#pragma once
// bfloat16 rounding, to model an accumulator with an 8-bit significand (1 + 7 stored bits).
// round_to_bfloat16 keeps a float's top 16 bits with round-to-nearest-even, which is what a
// bf16 conversion instruction does; NaN stays NaN (quiet), infinities stay infinite.
#include <bit>
#include <cmath>
#include <cstdint>

#include "core/hd.hpp"

namespace sumlab {

inline constexpr int bfloat16_precision = 8;

inline float round_to_bfloat16(float x) {
  if (std::isnan(x)) return x;
  std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t lsb = (b >> 16) & 1u;
  b += 0x7fffu + lsb;  // ties to even; a carry into the exponent is the correct rounding up
  b &= 0xffff0000u;
  return std::bit_cast<float>(b);
}

}  // namespace sumlab
