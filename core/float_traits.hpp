#pragma once
// IEEE 754 binary32/binary64 facts used everywhere: precision, unit roundoff, exponent range,
// bit patterns and ulps. Assumes IEEE arithmetic with round-to-nearest-even (the default mode;
// nothing in sumlab changes it).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "core/hd.hpp"

namespace sumlab {

template <class T> struct FloatTraits;

template <> struct FloatTraits<float> {
  using Bits = std::uint32_t;
  static constexpr int precision = 24;        // significand bits, hidden bit included
  static constexpr int exponent_bits = 8;
  static constexpr int emin = -126;           // smallest normal exponent
  static constexpr int emax = 127;
  static constexpr int min_subnormal_exp = -149;
  static constexpr Bits sign_bit = 0x80000000u;
  static constexpr Bits inf_bits = 0x7f800000u;  // the exponent field all ones: |x|'s bits >= it are Inf or NaN
  static constexpr std::string_view dtype = "float32";
};

template <> struct FloatTraits<double> {
  using Bits = std::uint64_t;
  static constexpr int precision = 53;
  static constexpr int exponent_bits = 11;
  static constexpr int emin = -1022;
  static constexpr int emax = 1023;
  static constexpr int min_subnormal_exp = -1074;
  static constexpr Bits sign_bit = 0x8000000000000000u;
  static constexpr Bits inf_bits = 0x7ff0000000000000u;
  static constexpr std::string_view dtype = "float64";
};

// The masks spelled out above follow from the format.
template <class T> constexpr bool masks_follow_format() {
  using F = FloatTraits<T>;
  using Bits = typename F::Bits;
  return F::sign_bit == Bits(1) << (sizeof(Bits) * 8 - 1) &&
         F::inf_bits == ((Bits(1) << F::exponent_bits) - 1) << (F::precision - 1);
}
static_assert(masks_follow_format<float>() && masks_follow_format<double>());

// Unit roundoff u = 2^-p: the largest relative error of one rounding to nearest.
template <class T> constexpr double unit_roundoff() {
  return std::ldexp(1.0, -FloatTraits<T>::precision);
}

// Higham's gamma_k = k u / (1 - k u); +inf when k u >= 1 (the bound then says nothing).
template <class T> double gamma(double k) {
  const double ku = k * unit_roundoff<T>();
  return ku < 1.0 ? ku / (1.0 - ku) : std::numeric_limits<double>::infinity();
}

template <class T> SUMLAB_HD constexpr typename FloatTraits<T>::Bits to_bits(T x) {
  return std::bit_cast<typename FloatTraits<T>::Bits>(x);
}
template <class T> SUMLAB_HD constexpr T from_bits(typename FloatTraits<T>::Bits b) { return std::bit_cast<T>(b); }

// "0x3dcccccd": the IEEE bit pattern, fixed width.
template <class T> std::string hex_bits(T x) {
  constexpr int digits = sizeof(T) * 2;
  auto b = to_bits(x);
  std::string s = "0x" + std::string(digits, '0');
  for (int i = 0; i < digits; ++i) {
    s[s.size() - 1 - i] = "0123456789abcdef"[b & 0xf];
    b >>= 4;
  }
  return s;
}

// ulp(x): the gap between |x| and the next larger magnitude in T, for finite x (subnormal spacing
// below the normal range; ulp(0) is the smallest subnormal).
template <class T> T ulp(T x) {
  x = std::fabs(x);
  if (!std::isfinite(x)) return std::numeric_limits<T>::quiet_NaN();
  if (x == std::numeric_limits<T>::max()) return x - std::nextafter(x, T(0));
  return std::nextafter(x, std::numeric_limits<T>::infinity()) - x;
}

}  // namespace sumlab
