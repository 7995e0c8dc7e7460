#pragma once
// gpu_fixed_point's arithmetic, shared by the CUDA kernel and the host, so that its bits equal
// core/fixed_point_sum.hpp's for every launch shape.
//
// The GPU kernel does what fixed_point_sum does, split across the machine: pass 1 finds the largest
// finite and smallest nonzero magnitudes (max and min: order-free), and the device derives k from
// them with fixed_one_pass (below: fixed_point_sum's own max_exponent rule); pass 2 quantises every element with fixed_quantise (below: the same integer steps
// as fixed_point_detail::quantise, written so that nvcc can compile them for the device) and adds
// the q_i as wrapping 128-bit integers (exact, so any grouping gives the same S); the host converts
// S * 2^-k with fixed_point_from_integer (below: the same conversion as fixed_point_sum's tail).
// The model of the kernel is therefore fixed_point_sum itself; tests/core/order_model_test.cpp
// checks that the split pieces reproduce it bitwise.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include "core/exact_sum.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/hd.hpp"

namespace sumlab::order_model {

SUMLAB_HD inline int bit_width_u64(std::uint64_t m) {
#if defined(__CUDA_ARCH__)
  return m == 0 ? 0 : 64 - __clzll(static_cast<long long>(m));
#else
  return m == 0 ? 0 : 64 - __builtin_clzll(m);
#endif
}
SUMLAB_HD inline int countr_zero_u64(std::uint64_t m) {
#if defined(__CUDA_ARCH__)
  return m == 0 ? 64 : __ffsll(static_cast<long long>(m)) - 1;
#else
  return m == 0 ? 64 : __builtin_ctzll(m);
#endif
}

struct FixedQuantised {
  std::int64_t q = 0;  // magnitude (the sign is applied by the caller)
  int bits_lost = 0;
  bool saturated = false;
};

// q = RNE(m * 2^shift) for m < 2^53, saturated to 2^63 - 1: fixed_point_detail::quantise, step
// for step.
SUMLAB_HD inline FixedQuantised fixed_quantise(std::uint64_t m, long long shift) {
  FixedQuantised r;
  if (m == 0) return r;
  const int width = bit_width_u64(m);
  if (shift >= 0) {
    if (width + shift > 63) {
      r.q = 0x7fffffffffffffffLL;
      r.saturated = true;
    } else {
      r.q = static_cast<std::int64_t>(m << shift);
    }
    return r;
  }
  const long long s = -shift;
  const int low = countr_zero_u64(m);
  if (low >= s) {
    r.q = static_cast<std::int64_t>(m >> s);
    return r;
  }
  r.bits_lost = static_cast<int>((s < width ? s : width) - low);
  if (s >= 64) return r;
  const std::uint64_t kept = m >> s;
  const std::uint64_t rest = m & ((std::uint64_t(1) << s) - 1);
  const std::uint64_t half = std::uint64_t(1) << (s - 1);
  const bool up = rest > half || (rest == half && (kept & 1) != 0);
  r.q = static_cast<std::int64_t>(kept + (up ? 1 : 0));
  return r;
}

// One element: is it NaN/Inf (then not quantised), its sign, and its quantised magnitude.
template <class Bits>
SUMLAB_HD inline FixedQuantised fixed_quantise_bits(Bits u, long long k, int frac_bits, int exponent_bits,
                                                     int bias, bool& special, bool& negative) {
  const Bits exp_mask = (Bits(1) << exponent_bits) - 1;
  const Bits frac_mask = (Bits(1) << frac_bits) - 1;
  const Bits e = (u >> frac_bits) & exp_mask;
  negative = (u >> (sizeof(Bits) * 8 - 1)) != 0;
  special = e == exp_mask;
  if (special) return FixedQuantised{};
  const std::uint64_t m = static_cast<std::uint64_t>((u & frac_mask) | (e == 0 ? Bits(0) : frac_mask + 1));
  const long long ex = (e == 0 ? 1 : static_cast<long long>(e)) - bias - frac_bits;
  return fixed_quantise(m, ex + k);
}

// 2^k as a T, for the scales fixed_quantise_group computes with the floating-point unit
// (1 - emax <= k <= emax: 2^k is a normal T; a negative k is a largest magnitude from about 2^62 up,
// lognormal sigma 12 among others); 0 for any other k (the integer steps then).
template <class T> SUMLAB_HD inline T fixed_two_k(long long k) {
  using Bits = typename FloatTraits<T>::Bits;
  if (k < 1 - FloatTraits<T>::emax || k > FloatTraits<T>::emax) return T(0);
  const Bits u = static_cast<Bits>(k + FloatTraits<T>::emax) << (FloatTraits<T>::precision - 1);
  T r;
  memcpy(&r, &u, sizeof(T));
  return r;
}

#if defined(__CUDACC__)
// RNE(v) as a 64-bit integer by the conversion instruction (saturated outside its range).
template <class T> __device__ __forceinline__ long long fixed_rint_ll(T v) {
  if constexpr (sizeof(T) == 4) return __float2ll_rn(v);
  else return __double2ll_rn(v);
}
#endif

// Adds a group's total G = sum q_i (at most 16 integers q_i, each |q_i| < 2^63) to the wrapping
// 128-bit `sum`, given s = G mod 2^64 (the q_i added as wrapping 64-bit words) and approx, a
// floating-point sum of the q_i as T (each exact): see fixed_quantise_group for why rounding
// (approx - T(s')) 2^-64 to the nearest integer gives the multiple of 2^64 that s lacks.
template <class T> SUMLAB_HD inline void fixed_add_group_total(detail::uint128& sum, unsigned long long s, T approx) {
  const long long s_signed = static_cast<long long>(s);
  const T d = (approx - static_cast<T>(s_signed)) * T(0x1p-64);
#if defined(__CUDA_ARCH__)
  const long long h = fixed_rint_ll(d);
#else
  const long long h = static_cast<long long>(std::nearbyint(d));
#endif
  // G = s' + 2^64 h = s + 2^64 (h - [s' < 0]), s read as unsigned.
  sum += (static_cast<detail::uint128>(static_cast<unsigned long long>(h - (s_signed < 0 ? 1 : 0))) << 64) + s;
}

// The bits a group's elements lost, beside their sum: how many lost any; the lost parts d_i =
// y_i - q_i (|d_i| <= 1/2) as the integers d_i 2^62, OR-ed, of those with |y_i| >= 1/2; and the
// significands of those that vanished (0 < |y_i| < 1/2, q_i = 0), normalised (the leading one at
// the implicit bit, a subnormal's too) and OR-ed, from the implicit bit up bits that do not matter
// (fixed_vanished_as_lost sets it), and 0 only where none vanished.
struct FixedGroupLoss {
  unsigned long long inexact = 0;
  unsigned long long lost = 0;
  unsigned long long vanished = 0;
};
// The most bits one element lost, from FixedGroupLoss::lost. An element with |y| = |x 2^k| >= 1/2
// that lost bits lost the positions from its lowest set bit 2^-b up to the grid bit 2^0: b bits,
// fixed_quantise's min(s, width) - low (s <= width there). Its d is y's part below 2^0, with the
// same lowest bit, so d 2^62 is an integer (b <= p) with 62 - b trailing zeros, and the OR has the
// fewest trailing zeros of any element's.
SUMLAB_HD inline int fixed_bits_lost(unsigned long long lost) { return lost == 0 ? 0 : 62 - countr_zero_u64(lost); }

// Normalised significands m OR-ed (`vanished`, nonzero; above p bits that do not matter, the leading
// one set here) in the lost parts' form, m 2^(62 - p): the leading one at 2^61, as a d of 1/2 has
// it, and trailing zeros that count as a d 2^62's do (fixed_bits_lost: 62 - ctz = p - ctz(m)), so
// in an OR with lost parts the fewest trailing zeros are the most bits lost. Pass 2's groups and
// the window pass's sparse blocks put their vanished elements in this form.
template <class T> SUMLAB_HD inline unsigned long long fixed_vanished_as_lost(unsigned long long vanished) {
  constexpr int p = FloatTraits<T>::precision;
  constexpr unsigned long long implicit = 1ull << (p - 1);
  return ((vanished & (implicit - 1)) | implicit) << (62 - p);
}

// The most bits one element of the groups in `loss` lost. An x whose y = x 2^k vanished (0 < |y| <
// 1/2) lost every bit of its significand m from the lowest set one up, bit_width(m) - ctz(m), which
// is fixed_quantise's min(s, width) - low, since there s > width (m 2^-s < 1/2 with m >= 2^(width-1)).
// Shifted up to p bits (the leading one at 2^(p-1), as a subnormal x scaled into the normal range
// has it), m keeps its width less its trailing zeros, p - ctz: the most of these is p less the
// trailing zeros of the normalised significands OR-ed, taken with the lost parts' in one OR.
template <class T> SUMLAB_HD inline int fixed_group_bits_lost(const FixedGroupLoss& loss) {
  return fixed_bits_lost(loss.lost | (loss.vanished != 0 ? fixed_vanished_as_lost<T>(loss.vanished) : 0));
}

// An element quantised at k as q = RNE(y), y = x 2^k, with d = y - q (|d| <= 1/2), at the finer
// grid k + j (0 <= j <= 30): RNE(2^j y) = 2^j q + RNE(2^j d), since 2^j q is an integer, even for
// j >= 1, so rounding to nearest even treats 2^j y and 2^j d alike. This returns RNE(2^j d) from
// one fused multiply-add: 2^j d is exact and at most 2^(j-1) in magnitude, so 1.5 2^52 + 2^j d
// lies in [2^52, 2^53), where doubles are the integers, and 1.5 2^52 is even, so the one rounding
// gives 1.5 2^52 + RNE(2^j d) (as a multiply and an add would: the product is exact), whose
// significand's low 32 bits are RNE(2^j d) in two's complement. The element lost bits at k + j
// exactly when 2^j d is not an integer: when it lost more than j bits at k (fixed_bits_lost).
SUMLAB_HD inline int fixed_finer_part(double d, double two_j) {
#if defined(__CUDA_ARCH__)
  return __double2loint(__fma_rn(d, two_j, 0x1.8p52));
#else
  const double r = std::fma(d, two_j, 0x1.8p52);
  std::uint64_t u = 0;
  std::memcpy(&u, &r, sizeof r);
  return static_cast<int>(static_cast<std::uint32_t>(u));
#endif
}

// |d| 2^24 for the lost part d = y - RNE(y) of a float y with |y| >= 1/2, in the low 24 bits of
// the result, without a conversion. y's lowest bit is at least 2^-24 (|y| >= 2^-1, 24 bits), and
// so is d's (d is y's part below 2^0, or that less 1), so |d| + 1/2 is exact: below 1 it lies in
// [1/2, 1), where floats step by 2^-24, and its bits are 0x3f000000 + |d| 2^24; at |d| = 1/2 it is
// 1.0, 0x3f800000, whose low 24 bits are 2^23 = |d| 2^24. Only the trailing zeros of the lost
// parts' OR count (fixed_bits_lost), and |d|'s are d's. The bits above (the exponent) are left for
// the caller to mask once, off the OR of a group's (an AND an element less).
SUMLAB_HD inline unsigned fixed_lost24_unmasked(float d) {
#if defined(__CUDA_ARCH__)
  return to_bits(fabsf(d) + 0.5f);
#else
  return to_bits(std::fabs(d) + 0.5f);
#endif
}

// 1 where fixed_lost24_unmasked's w = bits(|d| + 1/2) says d != 0 (w > bits(1/2) = 0x3f000000;
// w <= 0x3f800000 there) or w is a vanished element's stand-in (a float in [1, 2)), else 0, by one
// multiply-add's high word, on the FMA pipe (a compare and a select took two ALU instructions an
// element): (w - 0x3e000001) 2^8 lies in [2^32 - 2^8, 2^33) for every w from there up to
// 0x40000000, and reaches 2^32 exactly when w > 0x3f000000.
SUMLAB_HD inline unsigned fixed_lost24_flag(unsigned w) {
  return static_cast<unsigned>((static_cast<unsigned long long>(w) * 256u - 0x3e00000100ull) >> 32);
}

#if defined(__CUDA_ARCH__)
// The float in [1, 2) with v's significand, (v & 0x7fffff) | one_bits, one_bits = 0x3f800000, in
// one three-input logic instruction (written as C, ptxas splits it in two: it cannot encode two
// immediates). The caller makes one_bits once a group where ptxas cannot see its value
// (fixed_opaque_one_bits): given the constant, ptxas loaded it again before every element's
// instruction, one more instruction an element.
__device__ __forceinline__ unsigned fixed_in_one_to_two(unsigned v, unsigned one_bits) {
  unsigned r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(v), "r"(0x007fffffu), "r"(one_bits));
  return r;
}
// 0x3f800000, the bits of 1.0, as 2^k 0 + 1 (two_k is finite), which ptxas does not fold.
__device__ __forceinline__ unsigned fixed_opaque_one_bits(float two_k) {
  return __float_as_uint(__fmaf_rn(two_k, 0.0f, 1.0f));
}

// x 2^k computed afresh (the same exact product): a plain product here would be merged with the
// first loop's, keeping every y_i of the group in registers through the rare second loop (15 more
// registers a thread for doubles).
template <class T> __device__ __forceinline__ T fixed_scale_again(T x, T two_k) {
  T y;
  if constexpr (sizeof(T) == 4) asm volatile("mul.rn.f32 %0, %1, %2;" : "=f"(y) : "f"(x), "f"(two_k));
  else asm volatile("mul.rn.f64 %0, %1, %2;" : "=d"(y) : "d"(x), "d"(two_k));
  return y;
}
#endif

// The scale that normalises a vanished element's significand in one exact multiply (no select
// between x's own bits and a subnormal's scaled ones, two integer-unit instructions an element,
// the unit that bounds wide float groups). A vanished x has |x 2^k| < 1/2, so |x| < 2^(-1-k), and
// x 2^62 < 2^(61-k) stays finite for k >= fixed_vanishing_min_k = 60 - emax (float -67, double
// -963; k from the data is at least 61 - emax); the smallest subnormal times 2^62 (2^-87, 2^-1012)
// is normal, with its significand's leading one at the implicit bit, and a normal x keeps its
// significand. The bits above the significand do not matter (fixed_vanished_as_lost), and x 2^62
// is not 0, as "none vanished" is. Below that k (a caller's scale) the integer steps take the group.
template <class T> inline constexpr T fixed_vanishing_scale = T(0x1p62);
template <class T> inline constexpr long long fixed_vanishing_min_k = 60 - FloatTraits<T>::emax;
template <class T> SUMLAB_HD constexpr T fixed_vanishing_min_two_k() {  // 2^fixed_vanishing_min_k
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (sizeof(T) == 4) return 0x1p-67f;
  else return 0x1p-963;
}

// Whether a finite float x vanishes at k (0 < |x 2^k| < 1/2), from the bits z of x 2^62 alone, for
// k >= fixed_vanishing_min_k (two_k = 2^k): there x 2^62 is normal for every x != 0 and exact for
// every x that vanishes, so x vanishes exactly when 0 < |x 2^62| < 2^(61 - k), whose bits are
// 0x9d800000 - bits(2^k) (at k = -67, 2^128: infinity's bits, which an x 2^62 that overflowed, an x
// of 2^66 or more, does not compare below). Doubling the bits drops the sign and subtracting 2
// sends x = 0 to the top, so 0 < a < t exactly when 2a - 2 < 2t - 2, unsigned: fixed_vanish_limit
// gives 2t - 2 once, and each element takes a multiply-add (the FMA pipe) and a compare, where |y|
// < 1/2 and x != 0 took two compares on the ALU pipe, the wide groups' busiest. `two` is 2; the GPU
// passes one that ptxas cannot see (fixed_opaque_one_bits), since for a constant 2 it chose a
// shift-and-add on the ALU pipe.
SUMLAB_HD inline unsigned fixed_vanish_limit(float two_k) { return 2u * (0x9d800000u - to_bits(two_k)) - 2u; }
SUMLAB_HD inline bool fixed_vanishes(unsigned z, unsigned limit, unsigned two = 2u) {
  return two * z - 2u < limit;
}

// fixed_quantise_bits's common case for a group of N elements by the floating-point unit, without a
// branch (the kernel's hot loop). With two_k = fixed_two_k<T>(k) != 0 (the caller checks that
// once): y_i = x_i 2^k, q_i = RNE(y_i) by the hardware's conversion. Returns true, adds sum q_i to
// the wrapping 128-bit `sum`, sets largest = max |y_i| (0 where every y_i is +0 or -0: x_i = 0, or
// below the smallest subnormal once scaled by a negative k, so the caller tells -0 from its bits)
// and adds the elements that lost bits to `loss`, exactly when every element is ordinary: finite,
// y_i strictly inside (-2^63, 2^63); then fixed_quantise_bits gives that q_i (with the sign
// applied), nothing saturates, and fixed_group_bits_lost gives the most bits an element lost.
// Otherwise returns false and changes nothing (the caller redoes the group by the integer steps).
// An element that vanished (0 < |y_i| < 1/2: q_i = 0, every bit lost) costs its group a second
// loop, which leaves it out of the lost parts' OR (its d_i 2^62 need not be an integer) and ORs its
// normalised significand instead (fixed_group_bits_lost): an OR an element, where its width and
// trailing zeros, compared, took three bit scans (FLO, BREV) and six more instructions. Every bit
// pattern (three quarters of float elements vanish at k = -66) has such an element in nearly every
// group, wide inputs (lognormal sigma 12) too. Whether an element vanished is read from x_i != 0
// (float: from x_i 2^62, fixed_vanishes), not y_i != 0: with k < 0, y_i = x_i 2^k rounds where it
// falls below the normal range (to 0 below the smallest subnormal), which only an element far below
// 1/2 does. Why: y_i is a power-of-two scaling, exact unless it overflows or leaves the normal
// range, so every y_i of 1/2 or more is exact; round to nearest even is symmetric, so the sign can
// stay on y_i; d_i = y_i - q_i is exact (y_i's bits below 2^0; q_i is y_i itself from 2^(p-1) up),
// and y_i lost bits exactly when d_i != 0. float: only a group whose min |y_i| is below 2^(p-1)
// computes the d_i (with k from the data, a y_i below 2^23 is an x_i below 2^-38 of the largest);
// double: each d_i = y_i - T(q_i) in the one loop (on an H200 the min path was 0.2-20% slower for
// doubles, 0.2-10% faster for floats: docs/performance-notes.md). big = max |y_i| below 2^63 rules
// out Inf and saturation, and the sum A below (NaN when some y_i is) rules out NaN, which max and
// min pass over.
// The group's total G = sum q_i (|G| < N 2^63) costs one 64-bit add per element: s = G mod 2^64 by
// wrapping adds, and the multiple of 2^64 that s lacks, h = (G - s') / 2^64 with s' = s as a signed
// word, from a floating-point sum A of the y_i: A is within (N-1) u N 2^63 + N/2 of G (u = 2^-p;
// every y_i is exact, below 2^63 and within 1/2 of its q_i), T(s') within 2^(63-p) of s', the
// subtraction within u 2^(64 + log2 N) of its value; for N <= 16 and p >= 24 these stay below 2^48,
// far below the 2^63 that rounding (A - T(s')) 2^-64 to the nearest integer can absorb, so that
// rounding is h.
template <class T, int N>
SUMLAB_HD inline bool fixed_quantise_group(const T (&x)[N], T two_k, detail::uint128& sum, T& largest,
                                           FixedGroupLoss& loss) {
  static_assert(N <= 16 && FloatTraits<T>::precision >= 24, "the bound on h's rounding (above) needs these");
  constexpr bool by_min = sizeof(T) == 4;
  constexpr T whole = T(1ull << (FloatTraits<T>::precision - 1));  // every T this large is an integer
  using Bits = typename FloatTraits<T>::Bits;
  T big = 0, small = whole, approx = 0;
  bool vanished = false;  // double: some 0 < |y_i| < 1/2 (the second loop takes its bits lost)
  unsigned long long s = 0, inexact = 0, lost = 0, gone_bits = 0;
  for (int i = 0; i < N; ++i) {
    const T y = x[i] * two_k;
#if defined(__CUDA_ARCH__)
    const long long q = fixed_rint_ll(y);
    big = fmax(big, fabs(y));
    if constexpr (by_min) small = fmin(small, fabs(y));
#else
    const long long q = std::fabs(y) < T(0x1p63) ? static_cast<long long>(std::nearbyint(y)) : 0;
    big = std::fmax(big, std::fabs(y));
    if constexpr (by_min) small = std::fmin(small, std::fabs(y));
#endif
    if constexpr (!by_min) {  // double: the lost part d_i = y_i - T(q_i) in this loop
      const T d = y - static_cast<T>(q);
#if defined(__CUDA_ARCH__)
      const long long w = fixed_rint_ll(d * T(0x1p62));
      vanished |= (fabs(y) < T(0.5)) & (x[i] != T(0));
#else
      // (a d beyond 1/2 comes from a y that fails the group below; its conversion would be undefined)
      const long long w = std::fabs(d) <= T(0.5) ? static_cast<long long>(std::nearbyint(d * T(0x1p62))) : 0;
      vanished |= (std::fabs(y) < T(0.5)) & (x[i] != T(0));
#endif
      lost |= static_cast<unsigned long long>(w);
      inexact += d != T(0) ? 1 : 0;
    }
    approx += y;
    s += static_cast<unsigned long long>(q);
  }
  if (!(big < T(0x1p63) && approx == approx)) return false;
  // The lost parts without the vanished elements, the count (a vanished y may have rounded to 0),
  // and the vanished elements' significands, in one more loop: for double only where an element
  // vanished (its first loop took the lost parts), for float wherever a |y_i| lies below 2^(p-1)
  // (each d_i by rint, not T(q_i): to convert the q_i back here ptxas kept them all in registers,
  // 96 a thread for fixed_point_kernel<float, 512>, where two blocks of 512 a multiprocessor need
  // at most 64). One loop for both, not one for the lost parts and another for the vanished
  // elements: wide inputs (lognormal sigma 12) have both in nearly every group.
  if (by_min ? !(small >= whole) : vanished) {
    // x 2^62 normalises every vanished x (fixed_vanishing_scale): below that k the integer steps.
    if (!(two_k >= fixed_vanishing_min_two_k<T>())) return false;
    lost = 0;
    unsigned counted = 0;  // (N <= 16: a 32-bit count, added once)
    // Float's lost parts as d_i 2^24, 32-bit integers (a y_i of 1/2 or more has no bit below
    // 2^-24), masked to their 24 bits after the loop: on the GPU |d_i| 2^24 (fixed_lost24_unmasked).
    // A float's vanished element joins them in their form (fixed_vanished_as_lost: its normalised
    // significand with the implicit bit at 2^23, above the lost parts' at most 2^23 of d = 1/2), on
    // the GPU as the bits of a float in [1, 2), which fixed_lost24_flag counts too: one select and
    // one OR an element where the vanished elements' own OR took a select and an OR more. Whether
    // it vanished, from x 2^62's bits (fixed_vanishes).
    unsigned lost24 = 0;
    [[maybe_unused]] unsigned vanish_limit = 0, one_bits = 0, two = 2u;
    if constexpr (sizeof(T) == 4) {
      vanish_limit = fixed_vanish_limit(two_k);
#if defined(__CUDA_ARCH__)
      one_bits = fixed_opaque_one_bits(two_k);
      two = (one_bits >> 29) + 1u;
#endif
    }
    // Each element's ORs kept apart and OR-ed in threes after the loop (one instruction for two
    // elements, where a running OR takes one an element); gone_i, double's vanished significands.
    unsigned long long lost_i[N], gone_i[N];
    for (int i = 0; i < N; ++i) {
      [[maybe_unused]] const Bits u = to_bits(x[i]);
      // A vanished x's significand, normalised (fixed_group_bits_lost): x 2^62's bits.
      const Bits v = to_bits(x[i] * fixed_vanishing_scale<T>);
#if defined(__CUDA_ARCH__)
      const T y = fixed_scale_again(x[i], two_k);
      const T d = y - rint(y);
      if constexpr (sizeof(T) == 4) {
        const bool gone = fixed_vanishes(v, vanish_limit, two);
        const unsigned w = gone ? fixed_in_one_to_two(v, one_bits) : fixed_lost24_unmasked(d);
        lost_i[i] = w;
        counted += fixed_lost24_flag(w);
      } else {
        // (x != 0 from its bits: the first loop's compare, merged with this one, stayed live in
        // the hot loop's registers)
        const bool gone = (fabs(y) < T(0.5)) & ((u & ~FloatTraits<T>::sign_bit) != 0);
        lost_i[i] = gone ? 0ull : static_cast<unsigned long long>(fixed_rint_ll(d * T(0x1p62)));
        gone_i[i] = gone ? v : 0ull;
        counted += gone || d != T(0) ? 1u : 0u;
      }
#else
      const T y = x[i] * two_k;
      const T d = y - std::nearbyint(y);
      bool gone;
      if constexpr (sizeof(T) == 4) gone = fixed_vanishes(v, vanish_limit);
      else gone = (std::fabs(y) < T(0.5)) & (x[i] != T(0));
      const bool part = !gone && std::fabs(d) <= T(0.5);
      if constexpr (sizeof(T) == 4) {
        constexpr Bits frac_mask = (Bits(1) << (FloatTraits<T>::precision - 1)) - 1;
        lost_i[i] = gone ? (v & frac_mask) | 0x800000u : part ? static_cast<unsigned>(static_cast<int>(std::nearbyint(d * T(0x1p24)))) : 0u;
      } else {
        lost_i[i] = part ? static_cast<unsigned long long>(static_cast<long long>(std::nearbyint(d * T(0x1p62)))) : 0ull;
        gone_i[i] = gone ? v : 0ull;
      }
      counted += gone || d != T(0) ? 1u : 0u;
#endif
    }
    for (int i = 0; i < N; i += 2) {
      const unsigned long long lost_pair = lost_i[i] | (i + 1 < N ? lost_i[i + 1] : 0ull);
      if constexpr (sizeof(T) == 4) {
        lost24 |= static_cast<unsigned>(lost_pair);
      } else {
        lost |= lost_pair;
        gone_bits |= gone_i[i] | (i + 1 < N ? gone_i[i + 1] : 0ull);
      }
    }
    inexact = counted;
    // 2^38 takes d 2^24 to d 2^62 (its trailing zeros, all that counts: a negative d's two's
    // complement has |d|'s) and a vanished significand m to m 2^(62 - 24), fixed_vanished_as_lost's.
    if constexpr (sizeof(T) == 4) lost = static_cast<unsigned long long>(lost24 & 0xffffffu) << 38;
  }
  fixed_add_group_total(sum, s, approx);
  largest = big;
  loss.inexact += inexact;
  loss.lost |= lost;
  loss.vanished |= gone_bits;
  return true;
}

// floor(log2 a) for the bit pattern a of a finite nonzero magnitude: fixed_point_sum's
// max_exponent applied to that one value (its rule for subnormals included).
template <class T> SUMLAB_HD int floor_log2_magnitude(typename FloatTraits<T>::Bits a) {
  constexpr int frac_bits = FloatTraits<T>::precision - 1;
  const int e = static_cast<int>(a >> frac_bits);
  return e != 0 ? e - FloatTraits<T>::emax : bit_width_u64(a) - 1 + FloatTraits<T>::min_subnormal_exp;
}

// The float64 one-read pass's margins: its guess of the largest exponent E is at most M binades
// above its anchor A, M narrow or wide as fixed_window_light (below) chooses.
inline constexpr int fixed_window_narrow = 2, fixed_window_wide = 6;

// The float64 one-read pass's choice of margin (fixed_window_kernel, gpu/device/kernels/
// fixed_point_kernels.cuh): whether the first tiles it has seen look light-tailed, so that the
// narrow margin, 2 binades above their largest magnitude, should cover the input's largest. tiles:
// the first tiles seen with a finite nonzero element, of threads * per_thread elements each; near:
// their elements within 2^3 of their own tile's largest (floor(log2 |x|) >= floor(log2 largest) - 2);
// growth: the sum over those tiles of A - floor(log2 of the tile's largest), A = floor(log2) of the
// largest of them all; grid: whether the tiles are the grid's (fixed_exchange_first_tiles), else
// the block's own one, which its near count alone judges. Light: at least 1 in 8 of the elements
// near their own tile's largest (uniform, normal), or, over the grid, A at most 2 binades above the
// tiles' own on average (from 264 tiles of 2048 doubles of the bench's inputs: lognormal sigma 1
// 1.55, sigma 2 2.6; order_model_test). Neither choice changes a bit, only whether the guess holds
// and its cost.
SUMLAB_HD inline bool fixed_window_light(unsigned long long tiles, unsigned long long near, unsigned threads, int per_thread,
                                         long long growth, bool grid) {
  return near * 8 >= tiles * threads * per_thread || (grid && growth <= 2 * static_cast<long long>(tiles));
}

// Below this magnitude (as bits) an element vanishes at fixed_point_sum's grid of every input whose
// largest finite magnitude is at least `seen` (bits, finite and nonzero): k = 61 - E with E >= G =
// floor(log2 seen), so |x| < 2^(G - 62) puts |x 2^k| below 2^(G - 62 + 61 - E) <= 1/2, and q = 0.
// A normal such x then lost every bit of its significand m from the lowest set one up, 53 - ctz(m)
// for a double (fixed_group_bits_lost's rule), whatever E is: the window pass's sparse blocks count
// it, and write out only the others. 0 where 2^(G - 62) lies below the subnormals (nothing vanishes
// for sure).
template <class T> SUMLAB_HD inline typename FloatTraits<T>::Bits fixed_vanishes_below(typename FloatTraits<T>::Bits seen) {
  using Bits = typename FloatTraits<T>::Bits;
  constexpr int frac_bits = FloatTraits<T>::precision - 1;
  const int t = floor_log2_magnitude<T>(seen) - 62;
  if (t >= 1 - FloatTraits<T>::emax) return static_cast<Bits>(t + FloatTraits<T>::emax) << frac_bits;
  if (t >= FloatTraits<T>::min_subnormal_exp) return Bits(1) << (t - FloatTraits<T>::min_subnormal_exp);
  return Bits(0);
}

// The float64 one-read pass's third way, for inputs far wider than any window (lognormal sigma 12,
// every bit pattern: the largest lies 12 to 20 binades above the grid's first tiles, and 2^62 of
// range holds a fraction of the elements). Once A is known, a block whose first tile holds at most
// half its elements at or above fixed_vanishes_below(2^A) goes sparse: it counts the elements below
// that bound (which vanish at any E >= A), writes the others out for pass 2 to quantise at E, and
// raises the bound as larger elements come. Of the bench's lognormal sigma 12 input at 2^24, 26-28%
// of a first tile lies above the bound from A, 6.7% of the input above the bound from E; of sigma
// 8, 88% (a window then: it fails as well, but writes nothing). dense: the tile's elements at or
// above the bound (NaN and infinities among them); elements: the tile's.
SUMLAB_HD inline bool fixed_window_sparse(unsigned long long dense, unsigned long long elements) {
  return dense * 2 <= elements;
}

// gpu_fixed_point's decision after its first pass: k as fixed_point_sum derives it from the bit
// pattern of the largest finite magnitude (0: none), and whether every element certainly sits on
// the grid 2^-k, so that each q_i = x_i 2^k is exact and the fixed-point result is the exact sum
// rounded once. The pass proves each nonzero element's lowest bit high enough in one of two ways:
// it is a multiple of 2^lowest_grid (INT_MAX: no such element), or it is tracked in `smallest`,
// the smallest such magnitude's bits (~0: none), whose element's lowest bit is at least
// 2^(floor(log2 smallest) - (p - 1)), as is every larger element's.
struct FixedOnePass {
  long long k = 0;
  bool on_grid = true;
};
template <class T>
SUMLAB_HD FixedOnePass fixed_one_pass(typename FloatTraits<T>::Bits largest, typename FloatTraits<T>::Bits smallest,
                                      int lowest_grid = 0x7fffffff) {
  FixedOnePass r;
  if (largest == 0) return r;
  r.k = 61 - floor_log2_magnitude<T>(largest);
  const bool tracked_ok = smallest == static_cast<typename FloatTraits<T>::Bits>(~typename FloatTraits<T>::Bits(0)) ||
                          floor_log2_magnitude<T>(smallest) - (FloatTraits<T>::precision - 1) >= -r.k;
  r.on_grid = tracked_ok && lowest_grid >= -r.k;
  return r;
}

// The float one launch's guess (fixed_one_launch_kernel, gpu/device/kernels/fixed_point_kernels.cuh):
// whether a block whose first tile has largest and smallest nonzero magnitudes `largest` and
// `smallest` (bit patterns; ~0 where none is nonzero) and `in_top` elements in the largest one's
// binade (its exponent field's) quantises at the tile's k in the first read instead of adding
// exactly. Only where the tile is not on its own grid (fixed_one_pass: the exact sum would not
// settle the sum) and its largest does not stand alone: every bit pattern's tiles of 4096 hold
// 16 in their top binade on average, a heavy tail's one or two (lognormal sigma 12: its largest
// lies 12 to 20 binades above any tile's, where a guess only costs). Neither choice changes a bit.
inline constexpr unsigned fixed_guess_dense = 4;
struct FixedTileGuess {  // (no initialisers: the kernel keeps one in shared memory)
  bool guess;
  long long k;  // the tile's k, fixed_point_sum's rule on its largest magnitude
};
template <class T>
SUMLAB_HD FixedTileGuess fixed_tile_guess(typename FloatTraits<T>::Bits largest, typename FloatTraits<T>::Bits smallest,
                                          unsigned in_top) {
  const FixedOnePass d = fixed_one_pass<T>(largest, smallest);
  return {largest != 0 && !d.on_grid && in_top >= fixed_guess_dense, d.k};
}

// How the kernel's blocks add their wrapping 128-bit sums without waiting on one another: digit d
// (32 bits) of each block's sum goes to word d of the launch's total by an atomic add whose old
// value nobody reads, so no carry passes between words; a word gains < 2^32 a block, < 2^63 over
// < 2^31 blocks, and the total is the sum of word d * 2^(32 d), mod 2^128.
inline constexpr int fixed_digits = 4;
SUMLAB_HD inline unsigned long long fixed_digit(detail::uint128 v, int d) {
  return static_cast<unsigned long long>(v >> (32 * d)) & 0xffffffffull;
}
inline detail::uint128 fixed_total_from_digits(const unsigned long long* words) {
  detail::uint128 total = 0;
  for (int d = 0; d < fixed_digits; ++d) total += static_cast<detail::uint128>(words[d]) << (32 * d);
  return total;
}

// S * 2^-k correctly rounded to T, with the specials' IEEE rules: fixed_point_sum's conversion.
template <class T>
T fixed_point_from_integer(detail::uint128 sum, long long k, const SpecialCounts& specials) {
  return fixed_point_detail::from_integer<T>(sum, k, specials);
}

template <class T> struct FixedPointModel {
  T value;
  std::string note;
};

// The model of gpu_fixed_point: the CPU fixed-point sum (scale from max|x|, or the caller's k).
template <class T> FixedPointModel<T> fixed_point_model(std::span<const T> x, std::optional<int> k = std::nullopt) {
  const auto o = fixed_point_sum_with_report<T>(x, k);
  return {o.sum.value, o.sum.diagnostics};
}

}  // namespace sumlab::order_model
