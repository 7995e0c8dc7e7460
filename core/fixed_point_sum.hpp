#pragma once
// fixed_point_sum: every input rounded onto the binary grid 2^-k, the grid integers added exactly.
//
// Assumptions: T is IEEE binary32 or binary64; rounding is round-to-nearest, ties-to-even,
// everywhere (the quantisation of each input and the final conversion), done with integer
// operations only.
// Order of operations: any. q_i = RNE(x_i * 2^k) depends on x_i and k alone; the q_i are added in
// 128-bit integers, which is exact, so associative and commutative: every order, grouping or
// parallel split gives the same integer S = sum q_i (the addition wraps modulo 2^128, and wrapping
// addition is associative too, so even past the limit below the bits would not depend on order).
// The result is S * 2^-k correctly rounded to T, once (through Superaccumulator<T>::add_limb).
// Determinism class: shape_invariant for a given k; the derived k depends only on max|x_i|, which
// is order-independent too.
// Scale: the caller's k, or k = 61 - floor(log2 max|x_i|) so that every |q_i| < 2^62 (the largest
// elements land on the grid exactly; smaller ones round to at most 2^61).
// Limits: |q_i| < 2^63 always (a caller's k with |x_i * 2^k| >= 2^63 saturates q_i to
// +-(2^63 - 1) and reports overflow: the result is then meaningless), so S is exact for
// n < 2^64 elements (2^64 * 2^63 = 2^127).
// Error bound: |result - sum x_i| <= m * 2^(-k-1) + u |S * 2^-k|, m = number of inputs not on the
// grid (each moves by at most half a grid step); extra_error_bound reports m * 2^(-k-1).
// Specials: NaN and +-Inf inputs are counted, not quantised, and give the IEEE result (NaN for
// any NaN or for +Inf with -Inf, else +-Inf); an exact zero is -0 only if every input was -0.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/sum_result.hpp"

namespace sumlab {

// What the quantisation did.
struct FixedPointReport {
  int scale_exponent = 0;               // k: the grid step is 2^-k
  bool scale_from_data = true;          // k derived from max|x_i| (false: chosen by the caller)
  bool overflow = false;                // some |x_i * 2^k| >= 2^63 (saturated)
  std::uint64_t saturated_elements = 0;
  std::uint64_t inexact_elements = 0;   // x_i * 2^k not an integer: low bits dropped
  // The most significand bits one element dropped: for an inexact x_i = m * 2^e (m odd after
  // removing trailing zeros), the number of bit positions of m from its lowest set bit up to,
  // not including, the grid bit 2^-k (capped at m's width when the element vanished entirely).
  int max_bits_lost = 0;
  SpecialCounts specials;               // NaN / Inf / zero-sign bookkeeping of the inputs
};

template <class T> struct FixedPointOutcome {
  SumResult<T> sum;
  FixedPointReport report;
};

namespace fixed_point_detail {

// floor(log2 |x|) of the largest finite nonzero |x_i|, if any.
template <class T> std::optional<int> max_exponent(std::span<const T> x) {
  using Traits = FloatTraits<T>;
  using Bits = typename Traits::Bits;
  constexpr int frac_bits = Traits::precision - 1;
  constexpr Bits exp_mask = (Bits(1) << Traits::exponent_bits) - 1;
  constexpr Bits magnitude_mask = std::numeric_limits<Bits>::max() >> 1;
  Bits largest = 0;  // the bit patterns of finite non-negative numbers order like their values
  for (const T v : x) {
    const Bits a = std::bit_cast<Bits>(v) & magnitude_mask;
    if ((a >> frac_bits) != exp_mask) largest = std::max(largest, a);
  }
  if (largest == 0) return std::nullopt;
  const int e = static_cast<int>(largest >> frac_bits);
  if (e != 0) return e - Traits::emax;
  return static_cast<int>(std::bit_width(largest)) - 1 + Traits::min_subnormal_exp;
}

// The scale fixed_point_sum derives from the data: k = 61 - floor(log2 max|x_i|), 0 when no element
// is finite and nonzero.
template <class T> int data_scale(std::span<const T> x) {
  const std::optional<int> e = max_exponent(x);
  return e ? 61 - *e : 0;
}

struct Quantised {
  std::int64_t q = 0;
  int bits_lost = 0;  // 0: exact
  bool saturated = false;
};

// q = RNE(m * 2^shift) for a significand m < 2^53, saturated to +-(2^63 - 1) past 2^63.
inline Quantised quantise(std::uint64_t m, long long shift) {
  Quantised r;
  if (m == 0) return r;
  const int width = static_cast<int>(std::bit_width(m));
  if (shift >= 0) {
    if (width + shift > 63) {  // |m * 2^shift| >= 2^63
      r.q = std::numeric_limits<std::int64_t>::max();
      r.saturated = true;
    } else {
      r.q = static_cast<std::int64_t>(m << shift);
    }
    return r;
  }
  const long long s = -shift;  // bits below the grid
  const int low = std::countr_zero(m);
  if (low >= s) {
    r.q = static_cast<std::int64_t>(m >> s);
    return r;
  }
  r.bits_lost = static_cast<int>(std::min<long long>(s, width)) - low;
  if (s >= 64) return r;  // m < 2^53 <= half a grid step: rounds to 0
  const std::uint64_t kept = m >> s;
  const std::uint64_t rest = m & ((std::uint64_t(1) << s) - 1);
  const std::uint64_t half = std::uint64_t(1) << (s - 1);
  const bool up = rest > half || (rest == half && (kept & 1) != 0);
  r.q = static_cast<std::int64_t>(kept + (up ? 1 : 0));
  return r;
}

inline std::string describe(const FixedPointReport& r, bool special_result) {
  std::string s = "scale 2^" + std::to_string(-static_cast<long long>(r.scale_exponent));
  s += r.scale_from_data ? " (from max|x|)" : " (caller)";
  if (r.inexact_elements == 0) {
    s += "; no element lost bits";
  } else {
    s += "; " + std::to_string(r.inexact_elements) +
         (r.inexact_elements == 1 ? " element" : " elements") + " lost low bits (at most " +
         std::to_string(r.max_bits_lost) + ")";
  }
  if (r.overflow) {
    s += "; OVERFLOW: " + std::to_string(r.saturated_elements) +
         " saturated at |x*2^k| >= 2^63, result meaningless";
  } else {
    s += "; no overflow";
  }
  const SpecialCounts& c = r.specials;
  if (c.nan + c.pos_inf + c.neg_inf != 0) {
    s += "; specials: " + std::to_string(c.nan) + " NaN, " + std::to_string(c.pos_inf) + " +Inf, " +
         std::to_string(c.neg_inf) + " -Inf";
    if (special_result) s += " (IEEE result)";
  }
  return s;
}

// The error the grid 2^-k made on purpose: m * 2^(-k-1) for the m inputs off the grid (each moved
// by at most half a step), +inf when some input saturated, 0 when none lost a bit. Host code: the
// GPU kernel's counts give the same bound as the CPU's.
inline double grid_error_bound(const FixedPointReport& r, long long k) {
  if (r.overflow) return std::numeric_limits<double>::infinity();
  if (r.inexact_elements == 0) return 0;
  // ldexp is exact here, and the exponent clamp only matters for absurd k.
  const long long ex = std::clamp(-k - 1, -100000LL, 100000LL);
  return std::ldexp(static_cast<double>(r.inexact_elements), static_cast<int>(ex));
}

// S * 2^-k correctly rounded to T (S: the wrapping 128-bit sum of the q_i, read as signed), with
// the IEEE special rules of `specials`. Shared with the GPU kernel's host side.
template <class T>
T from_integer(detail::uint128 sum, long long k, const SpecialCounts& specials) {
  using Acc = Superaccumulator<T>;
  Acc acc;
  acc.add_specials(specials);
  const bool negative = static_cast<detail::int128>(sum) < 0;
  detail::uint128 a = negative ? -sum : sum;  // |S| < 2^127
  // Bit 0 of S weighs 2^-k = 2^(t + min_exponent) in the accumulator.
  long long t = -k - Acc::min_exponent;
  if (t < 0) {
    // Every x_i is a multiple of 2^min_exponent, so x_i * 2^k (an integer here) and S are
    // multiples of 2^-t: the shift drops only zeros (unless saturation already spoilt S).
    a = -t >= 128 ? 0 : a >> -t;
    t = 0;
  }
  bool beyond_range = false;
  for (int j = 0; j < 4 && a != 0; ++j, a >>= Acc::limb_bits) {
    const auto digit = static_cast<std::int64_t>(static_cast<std::uint64_t>(a) & 0xffffffffu);
    if (digit == 0) continue;
    const long long bit = t + static_cast<long long>(Acc::limb_bits) * j;
    const long long limb = bit / Acc::limb_bits;
    if (limb >= Acc::num_limbs) {  // far beyond the range of T
      beyond_range = true;
      break;
    }
    const std::int64_t v = digit << (bit % Acc::limb_bits);  // < 2^63
    acc.add_limb(static_cast<int>(limb), negative ? -v : v);
  }
  const T value = acc.round();
  if (beyond_range && !std::isnan(value)) {
    return negative ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  }
  return value;
}

}  // namespace fixed_point_detail

// The fixed-point sum with its full report; see the header comment.
template <class T>
FixedPointOutcome<T> fixed_point_sum_with_report(std::span<const T> x,
                                                 std::optional<int> scale_exponent = std::nullopt) {
  using Traits = FloatTraits<T>;
  using Bits = typename Traits::Bits;
  constexpr int frac_bits = Traits::precision - 1;
  constexpr Bits exp_mask = (Bits(1) << Traits::exponent_bits) - 1;
  constexpr Bits frac_mask = (Bits(1) << frac_bits) - 1;
  constexpr int sign_shift = int(sizeof(T)) * 8 - 1;
  constexpr int bias = Traits::emax;

  FixedPointOutcome<T> out;
  FixedPointReport& rep = out.report;
  if (scale_exponent) {
    rep.scale_exponent = *scale_exponent;
    rep.scale_from_data = false;
  } else {
    rep.scale_exponent = fixed_point_detail::data_scale(x);
  }
  const long long k = rep.scale_exponent;

  detail::uint128 sum = 0;  // wrapping, so that no order can hit undefined behaviour
  std::uint64_t negative_zeros = 0;
  for (const T v : x) {
    const Bits u = std::bit_cast<Bits>(v);
    const Bits e = (u >> frac_bits) & exp_mask;
    if (e == exp_mask) {  // NaN / Inf: counted, not quantised
      if ((u & frac_mask) != 0) ++rep.specials.nan;
      else if (u >> sign_shift) ++rep.specials.neg_inf;
      else ++rep.specials.pos_inf;
      continue;
    }
    negative_zeros += u == (Bits(1) << sign_shift) ? 1 : 0;
    // x = m * 2^ex exactly, m an integer below 2^p.
    const std::uint64_t m = (u & frac_mask) | (e == 0 ? 0 : frac_mask + 1);
    const long long ex = (e == 0 ? 1 : static_cast<long long>(e)) - bias - frac_bits;
    const fixed_point_detail::Quantised q = fixed_point_detail::quantise(m, ex + k);
    if (q.saturated) {
      rep.overflow = true;
      ++rep.saturated_elements;
    }
    if (q.bits_lost != 0) {
      ++rep.inexact_elements;
      rep.max_bits_lost = std::max(rep.max_bits_lost, q.bits_lost);
    }
    const auto magnitude = static_cast<detail::uint128>(static_cast<std::uint64_t>(q.q));
    sum += (u >> sign_shift) ? -magnitude : magnitude;
  }

  rep.specials.count += x.size();
  if (negative_zeros != x.size()) rep.specials.all_negative_zero = false;

  const T value = fixed_point_detail::from_integer<T>(sum, k, rep.specials);
  const bool special_result = !std::isfinite(value);

  out.sum.value = value;
  out.sum.extra_error_bound = fixed_point_detail::grid_error_bound(rep, k);
  out.sum.diagnostics = fixed_point_detail::describe(rep, special_result);
  return out;
}

// The fixed-point sum: value, quantisation error bound m * 2^(-k-1), one-line diagnostics.
template <class T>
SumResult<T> fixed_point_sum(std::span<const T> x,
                             std::optional<int> scale_exponent = std::nullopt) {
  return fixed_point_sum_with_report<T>(x, scale_exponent).sum;
}

}  // namespace sumlab
