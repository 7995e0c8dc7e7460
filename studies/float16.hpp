#pragma once
// IEEE 754 binary16 (NumPy float16, '<f2') widened to binary32. Every binary16 value is exactly
// a binary32 value (11-bit significand into 24, exponents -24..15 into -149..127), so the
// widening never rounds: normals get their exponent rebiased (15 -> 127), subnormals (m * 2^-24)
// are normalized, and infinities and NaNs keep their sign and payload (the quiet bit included).
#include <bit>
#include <cstdint>

namespace sumlab {

constexpr float float16_to_float32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, nan
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);  // +-0
  // Subnormal m * 2^-24: shift the leading 1 up to bit 10, lowering the exponent each step.
  std::uint32_t e = 113;  // the biased float32 exponent of 2^-14, the smallest float16 normal
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

}  // namespace sumlab
