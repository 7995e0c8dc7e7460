#pragma once
// gpu_exact's per-element step, shared by the CUDA kernel and the CPU tests: an IEEE value split
// by bit manipulation into at most three 32-bit digits of core/exact_sum.hpp's superaccumulator
// layout (bit 0 of limb 0 weighs 2^min_subnormal_exp). No floating-point operation touches the
// data, so the digits are the same on any machine; adding them with integer arithmetic in any
// order and handing the totals to Superaccumulator<T>::add_limb gives exact_sum's bits.
#include <cmath>
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

// gpu_exact's double whole range (gpu/device/kernels/exact_kernel.cuh, ExactBins: radix 2^48): a
// finite x of exponent field E goes to bin b = E / 48 (E * 683 >> 15, for every E < 2048) as
// y = x 2^(1075 - 48 b) half units of the smallest subnormal, an integer below 2^100, split into
// lo = y - hi 2^48 (below 2^48) for bin b and hi = trunc(y 2^-48) (below 2^52) for bin b + 1, both
// with y's sign. Every step is exact: x 2^(1000 - 48 b) is a normal double for every finite x
// (subnormals included), its products with 2^75 and 2^-48 are exact, so is trunc, and y - hi 2^48,
// an integer below 2^48, is what one fma rounds to. A zero gives bin 0 and zero digits.
struct WholeRangeDigits {
  int bin;
  long long lo, hi;
};
SUMLAB_HD inline WholeRangeDigits whole_range_digits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  const unsigned b = (static_cast<unsigned>(u >> 52) & 0x7ffu) * 683u >> 15;
  const int scale_high = static_cast<int>((2023u - 48u * b) << 20);  // 2^(1000 - 48 b)'s high word
#if defined(__CUDA_ARCH__)
  const double scale = __hiloint2double(scale_high, 0);
#else
  const std::uint64_t scale_bits = static_cast<std::uint64_t>(static_cast<unsigned>(scale_high)) << 32;
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
#endif
  const double y = (x * scale) * 0x1p75;
  const double th = trunc(y * 0x1p-48);
  WholeRangeDigits d;
  d.bin = static_cast<int>(b);
  d.hi = static_cast<long long>(th);
  d.lo = static_cast<long long>(fma(th, -0x1p48, y));
  return d;
}

// The radix-2^48 whole range's block end (exact_kernel.cuh, push_bins): a thread's bin x as it is
// (|x| < 2^62 between normalisings) in three pieces, x = p2 2^48 + p1 2^24 + p0 (p0, p1: 24 bits;
// p2 = x >> 48, signed, below 2^14), which a warp adds by 32-bit reductions (sums below 2^29, and
// 2^19 in magnitude). p2's sum weighs 2^48 more, bin k + 1's weight, so it joins that bin's total:
// T_k = p1 2^24 + p0 + p2(k - 1), |T_k| < 2^55, the top bin keeping its own p2 too (it holds only
// normalising's carries, below 2^18).
SUMLAB_HD inline unsigned whole_range_p0(long long x) { return static_cast<unsigned>(x & 0xffffff); }
SUMLAB_HD inline unsigned whole_range_p1(long long x) { return static_cast<unsigned>((x >> 24) & 0xffffff); }
SUMLAB_HD inline int whole_range_p2(long long x) { return static_cast<int>(x >> 48); }
// Bin k's total from a warp's sums of its lanes' pieces and bin k - 1's p2 sum (`carry`, 0 for
// bin 0); `top`: the last bin, which keeps its own p2 sum. A block's total of bin k weighs
// 2^(48 k) half units: bit 48 k - 1 of the limbs, bin 0's (even: every element adds an even
// number of half units to it, and p2 2^48 is even) halved at bit 0.
SUMLAB_HD inline long long whole_range_bin_total(unsigned p0, unsigned p1, int p2, int carry, bool top) {
  long long total = static_cast<long long>(p1) * (1ll << 24) + static_cast<long long>(p0) + carry;
  if (top) total += static_cast<long long>(p2) * (1ll << 48);
  return total;
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
