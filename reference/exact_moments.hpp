#pragma once
// Exact mean, population variance and M2 of a row of float/double values, each correctly rounded
// (round-to-nearest-even) to T and, separately, to double. The reference against which Welford,
// the textbook one-pass formula, two-pass and Chan's merge are measured. No MPFR types here.
//
// Definitions (population, divisor n):
//   S1 = sum x_i,  S2 = sum x_i^2,  N = n*S2 - S1^2  (= n * M2 >= 0)
//   mean = S1 / n,  M2 = sum (x_i - mean)^2 = N / n,  variance = M2 / n = N / n^2,
//   mean_square = S2 / n  (what RMSNorm needs: rms = sqrt(mean_square + eps)).
//
// WHY each result is correctly rounded: every step before the final division is exact.
//   - S1 is an exact MPFR sum (as in reference/mpfr_sum.hpp).
//   - x_i^2 is exact with 2p bits (the product of two p-bit significands), and an integer multiple
//     of 2^(2 e_min) below 2^(2 emax + 2); S2 is an exact mpfr_sum of these at enough bits.
//   - N = n*S2 - S1^2 is an exact integer multiple of 2^(2 e_min), held at a precision above its
//     bit length (n < 2^64), so the multiplication, the squaring and the subtraction are exact.
//   - n and n^2 (< 2^128) are exact.
// So each result is q = A / B for exact A, B, i.e. the exact rational value. It is then rounded
// ONCE in effect: mpfr_div to p + 2 = 55 bits with round-to-odd (truncate; if inexact, force the
// last bit to 1), then mpfr_get_flt / mpfr_get_d (round-to-nearest-even). Rounding to odd at
// k + 2 bits followed by round-to-nearest at k bits equals round-to-nearest of the exact value
// (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
// rounding to odd", IEEE TC 2008), and this holds for any coarser grid, so it is also correct when
// the result is subnormal in T (fewer than p bits) and when it overflows T (then +-Inf). A direct
// mpfr_div into p bits would double-round there, because MPFR's exponent range is not T's.
//
// Specials: n = 0 -> every field NaN. A NaN input, or +Inf and -Inf together -> every field NaN.
// Otherwise an infinite input -> mean +-Inf, mean_square +Inf, variance and m2 NaN. An exact zero
// mean is -0 only when every input is -0 (IEEE sum rules); variance/m2/mean_square of finite
// inputs are >= +0. Results beyond the range of T round to +-Inf (e.g. the variance of
// {-FLT_MAX, FLT_MAX} in float).
#include <cstddef>
#include <span>
#include <vector>

namespace sumlab::reference {

template <class T> struct ExactMoments {
  std::size_t n = 0;
  T mean{};         // S1 / n, correctly rounded to T
  T variance{};     // M2 / n (population variance), correctly rounded to T
  T m2{};           // sum (x_i - mean)^2 with the exact mean, correctly rounded to T
  T mean_square{};  // S2 / n, correctly rounded to T
  double mean_d = 0, variance_d = 0, m2_d = 0, mean_square_d = 0;  // the same, rounded to double
};

template <class T> ExactMoments<T> exact_moments(std::span<const T> x);

// Shorthands: the exact population variance / mean correctly rounded to double.
template <class T> double exact_variance(std::span<const T> x) {
  return exact_moments<T>(x).variance_d;
}
template <class T> double exact_mean(std::span<const T> x) {
  return exact_moments<T>(x).mean_d;
}

// One ExactMoments per row of a row-major rows x cols matrix (data.size() must be rows * cols,
// else std::invalid_argument).
template <class T>
std::vector<ExactMoments<T>> exact_row_moments(std::span<const T> data, std::size_t rows,
                                               std::size_t cols);

}  // namespace sumlab::reference
