#pragma once
// Error metrics that need no exact arithmetic: correct bits from a relative error, the distance
// in representable values between two floats, and the condition number of a sum.
//
// Assumptions: IEEE binary32/binary64 (core/float_traits.hpp). The exact quantities these take
// (a relative error, a sum of absolute values) come from reference/ (MPFR) or core/exact_sum.hpp;
// these functions only turn them into the numbers studies report.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/float_traits.hpp"

namespace sumlab {

// The median of timings or values: the middle one, or the mean of the two middle ones; NaN for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Correct bits of a result with relative error `rel_error` in a format of `precision` bits.
// p means exact and nothing else: rel_error == 0 -> p. An inexact result gets -log2(rel_error),
// capped at the largest double below p (std::nextafter(p, 0)) and clamped below at 0 (a result off
// by 100% or more has no correct bits); NaN -> NaN. WHY the cap is below p: every inexact
// correctly rounded result has rel_error <= 2^-p, and a result 1 ulp from it can too (1 + 2^-24
// + 2^-60 summed serially in float32 is 1, 1 ulp below the reference 1 + 2^-23, with rel_error
// just under 2^-24), so min(p, -log2) would report p for results that are not exact. The cap
// changes only values that would reach p: every -log2(rel_error) below p is reported as it is.
inline double correct_bits(double rel_error, int precision) {
  if (std::isnan(rel_error)) return rel_error;
  const double p = precision;
  if (rel_error <= 0) return p;
  const double bits = -std::log2(rel_error);
  const double below_p = std::nextafter(p, 0.0);
  return bits < 0 ? 0.0 : (bits > below_p ? below_p : bits);
}

// The monotone integer image of an IEEE value: -x maps to -(image of x), +0 and -0 both map to 0,
// and consecutive representable values (subnormals, normals, +-max, +-Inf) map to consecutive
// integers. Precondition: x is not NaN.
template <class T> std::int64_t ordered_index(T x) {
  using Bits = typename FloatTraits<T>::Bits;
  constexpr Bits sign = FloatTraits<T>::sign_bit;
  const Bits b = to_bits(x);
  const auto magnitude = static_cast<std::int64_t>(b & ~sign);
  return (b & sign) ? -magnitude : magnitude;
}

// Number of steps between a and b in the ordered set of representable values of T (so a value and
// its nextafter are 1 apart; +0 and -0 are 0 apart; -min_subnormal and +min_subnormal are 2 apart;
// Inf counts as the value after max). Returns UINT64_MAX when either is NaN. Never overflows: the
// largest distance (-Inf to +Inf in double) is 2 * 0x7ff0000000000000 < 2^64.
template <class T> std::uint64_t ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<std::uint64_t>::max();
  const std::int64_t ia = ordered_index(a), ib = ordered_index(b);
  return ia >= ib ? static_cast<std::uint64_t>(ia) - static_cast<std::uint64_t>(ib)
                  : static_cast<std::uint64_t>(ib) - static_cast<std::uint64_t>(ia);
}

// Signed version: positive when a > b (a lies above b), saturating at INT64_MAX / INT64_MIN (only
// reachable in double, between values of opposite signs both beyond about 2^1023 / 2).
// Returns 0 when either is NaN: check with std::isnan first when NaN is possible.
template <class T> std::int64_t signed_ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return 0;
  const std::uint64_t d = ulp_distance(a, b);
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (d > max) {
    return ordered_index(a) > ordered_index(b) ? std::numeric_limits<std::int64_t>::max()
                                               : std::numeric_limits<std::int64_t>::min();
  }
  const auto s = static_cast<std::int64_t>(d);
  return ordered_index(a) >= ordered_index(b) ? s : -s;
}

// Condition number of a sum: sum_abs / abs_sum, i.e. sum|x_i| / |sum x_i|. It multiplies the
// relative perturbation of the terms into the relative error of the sum (Higham, ASNA 4.2).
// abs_sum == 0: +inf if sum_abs > 0 (an exactly cancelling sum: any rounding error is infinitely
// large relative to it), 1 if sum_abs == 0 too (all terms zero: every order is exact).
// NaN in, NaN out.
inline double condition_number(double sum_abs, double abs_sum) {
  if (std::isnan(sum_abs) || std::isnan(abs_sum)) return std::numeric_limits<double>::quiet_NaN();
  abs_sum = std::fabs(abs_sum);
  if (abs_sum == 0) return sum_abs > 0 ? std::numeric_limits<double>::infinity() : 1.0;
  return sum_abs / abs_sum;
}

}  // namespace sumlab
