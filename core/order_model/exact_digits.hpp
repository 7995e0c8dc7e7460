#pragma once
// gpu_exact's per-element step, shared by the CUDA kernel and the CPU tests: an IEEE value split
// by bit manipulation into at most three 32-bit digits of core/exact_sum.hpp's superaccumulator
// layout (bit 0 of limb 0 weighs 2^min_subnormal_exp). No floating-point operation touches the
// data, so the digits are the same on any machine; adding them with integer arithmetic in any
// order and handing the totals to Superaccumulator<T>::add_limb gives exact_sum's bits.
#include <cstdint>
#include <cstring>

#include "core/float_traits.hpp"
#include "core/hd.hpp"

#if defined(__CUDACC__)
#define SUMLAB_EXACT_UNROLL _Pragma("unroll")
#else
#define SUMLAB_EXACT_UNROLL
#endif

namespace sumlab::order_model {

enum class ExactClass : std::uint8_t { zero, finite, nan, pos_inf, neg_inf };

struct ExactDigits {
  ExactClass cls = ExactClass::zero;
  bool negative = false;
  bool negative_zero = false;  // the value is -0 (the sign of an exact zero sum depends on these)
  int limb = 0;                // digit[j] is added to limb `limb + j`
  std::uint64_t digit[3] = {0, 0, 0};  // each < 2^32
};

// x = m * 2^(shift + min_exponent) with m = significand (hidden bit for normals), shift = e - 1
// for normals, 0 for subnormals (they share the weight of e == 1); m * 2^(shift mod 32) spans at
// most 85 bits, i.e. three digits starting at limb shift / 32.
template <class T> SUMLAB_HD inline ExactDigits exact_digits(T x) {
  using Bits = typename FloatTraits<T>::Bits;
  constexpr int frac_bits = FloatTraits<T>::precision - 1;
  constexpr Bits exp_mask = (Bits(1) << FloatTraits<T>::exponent_bits) - 1;
  constexpr Bits frac_mask = (Bits(1) << frac_bits) - 1;
  constexpr int sign_shift = int(sizeof(T)) * 8 - 1;
  Bits u;
  std::memcpy(&u, &x, sizeof(T));
  ExactDigits d;
  d.negative = (u >> sign_shift) != 0;
  d.negative_zero = u == (Bits(1) << sign_shift);
  const Bits e = (u >> frac_bits) & exp_mask;
  const Bits f = u & frac_mask;
  if (e == exp_mask) {
    d.cls = f != 0 ? ExactClass::nan : (d.negative ? ExactClass::neg_inf : ExactClass::pos_inf);
    return d;
  }
  if (e == 0 && f == 0) return d;  // zero
  d.cls = ExactClass::finite;
  const std::uint64_t m = e != 0 ? static_cast<std::uint64_t>(f | (frac_mask + 1)) : static_cast<std::uint64_t>(f);
  const int shift = e != 0 ? static_cast<int>(e) - 1 : 0;
  const int s = shift & 31;
  d.limb = shift >> 5;
  const std::uint64_t lo = m << s;
  const std::uint64_t hi = s != 0 ? m >> (64 - s) : 0;
  d.digit[0] = lo & 0xffffffffull;
  d.digit[1] = lo >> 32;
  d.digit[2] = hi;
  return d;
}

}  // namespace sumlab::order_model

namespace sumlab::order_model {

// A thread's private window of W consecutive limbs (registers on the GPU). An element whose three
// digits fall inside the window is added there; otherwise the window is flushed through `sink`
// (sink(limb, value) once per nonzero limb: gpu_exact's sink is a shared-memory atomicAdd) and
// re-centred on the element. Integer adds in any grouping give the same totals, so the window only
// changes how many atomics a kernel issues (uniform data would otherwise send every atomic of a
// block to the same two or three words). Bound: a window limb receives at most one digit (< 2^32)
// per element, so it cannot overflow int64 before 2^31 elements.
template <int W> struct ExactLimbWindow {
  static_assert(W >= 3, "an element spans three limbs");
  int base = -1;  // first limb of the window; -1 = empty
  long long acc[W] = {};

  template <class Sink> SUMLAB_HD void flush(int num_limbs, Sink&& sink) {
    if (base < 0) return;
SUMLAB_EXACT_UNROLL
    for (int j = 0; j < W; ++j)
      if (acc[j] != 0 && base + j < num_limbs) sink(base + j, acc[j]);
  }

  template <class Sink> SUMLAB_HD void add(const ExactDigits& d, int num_limbs, Sink&& sink) {
    if (base < 0 || d.limb < base || d.limb + 2 >= base + W) {
      flush(num_limbs, sink);
      base = d.limb - (W - 3) / 2 > 0 ? d.limb - (W - 3) / 2 : 0;
SUMLAB_EXACT_UNROLL
      for (int j = 0; j < W; ++j) acc[j] = 0;
    }
    const int o = d.limb - base;
    const long long v0 = static_cast<long long>(d.digit[0]);
    const long long v1 = static_cast<long long>(d.digit[1]);
    const long long v2 = static_cast<long long>(d.digit[2]);
SUMLAB_EXACT_UNROLL
    for (int j = 0; j < W; ++j) {
      const long long v = j == o ? v0 : j == o + 1 ? v1 : j == o + 2 ? v2 : 0;
      acc[j] += d.negative ? -v : v;
    }
  }
};

}  // namespace sumlab::order_model
