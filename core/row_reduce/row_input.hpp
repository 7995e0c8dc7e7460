#pragma once
// The element types a row kernel reads, and the accumulator each one widens to.
//
//   float32   -> float accumulator
//   bfloat16  -> float accumulator; stored as its 16 bits in a std::uint16_t (bfloat16_bits), so
//                that host headers need no CUDA bf16 type; widening is exact (the bits become the
//                top half of a float)
//   float64   -> double accumulator
// Every operation of a row kernel happens in the accumulator type; inputs are widened once, on load.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/bfloat16.hpp"
#include "core/hd.hpp"
#include "core/portable_math.hpp"

namespace sumlab::row_reduce {

// A bfloat16 value as its IEEE bits (sign, 8 exponent bits, 7 fraction bits).
using bfloat16_bits = std::uint16_t;

template <class In> struct RowInput;

template <> struct RowInput<float> {
  using Acc = float;
  static constexpr std::string_view dtype = "float32";
  SUMLAB_HD static Acc widen(float x) { return x; }
};

template <> struct RowInput<double> {
  using Acc = double;
  static constexpr std::string_view dtype = "float64";
  SUMLAB_HD static Acc widen(double x) { return x; }
};

template <> struct RowInput<bfloat16_bits> {
  using Acc = float;
  static constexpr std::string_view dtype = "bfloat16";
  SUMLAB_HD static Acc widen(bfloat16_bits b) { return float_from_bits(static_cast<std::uint32_t>(b) << 16); }
};

template <class In> using row_acc_t = typename RowInput<In>::Acc;

// float -> bfloat16 bits, round to nearest even (core/bfloat16.hpp); NaN stays a quiet NaN.
inline bfloat16_bits to_bfloat16_bits(float x) {
  const float r = round_to_bfloat16(x);
  std::uint32_t w;
  std::memcpy(&w, &r, sizeof w);
  if (r != r) w |= 0x00400000u;  // keep it a NaN after truncation (quiet bit inside the top half)
  return static_cast<bfloat16_bits>(w >> 16);
}

}  // namespace sumlab::row_reduce
