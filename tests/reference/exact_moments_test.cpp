// reference/exact_moments: known values, rounding into the subnormal range and past the overflow
// threshold, IEEE specials, and a cross-check against an independent exact computation with GMP
// rationals (mean S1/n and the TWO-PASS sum of (x_i - mean)^2, a different formula from the
// n*S2 - S1^2 of the implementation), rounded through a tight directed-rounding bracket.
#include "reference/exact_moments.hpp"

#include <gmp.h>
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/float_traits.hpp"

namespace {

using sumlab::reference::exact_moments;
using sumlab::reference::exact_row_moments;
using sumlab::reference::ExactMoments;

template <class T> bool same_bits(T a, T b) { return sumlab::to_bits(a) == sumlab::to_bits(b); }
#define EXPECT_BITS_EQ(a, b) EXPECT_PRED2((same_bits<std::decay_t<decltype(a)>>), a, b)

template <class T> ExactMoments<T> em(std::vector<T> v) {
  return exact_moments<T>(std::span<const T>(v));
}

TEST(ExactMoments, KnownValues) {
  const auto m = em<double>({1, 2, 3, 4});
  EXPECT_EQ(m.n, 4u);
  EXPECT_EQ(m.mean, 2.5);
  EXPECT_EQ(m.m2, 5.0);
  EXPECT_EQ(m.variance, 1.25);
  EXPECT_EQ(m.mean_square, 7.5);
  const auto f = em<float>({1, 2, 3, 4});
  EXPECT_EQ(f.mean, 2.5f);
  EXPECT_EQ(f.variance_d, 1.25);
  // mean 1/3 of {0, 0, 1}: correctly rounded in each format.
  const auto t = em<float>({0, 0, 1});
  EXPECT_BITS_EQ(t.mean, 1.0f / 3.0f);
  EXPECT_BITS_EQ(t.mean_d, 1.0 / 3.0);
  EXPECT_BITS_EQ(t.variance, 2.0f / 9.0f);  // (1/3)(2/3)... = 2/9, one division of exacts
  EXPECT_BITS_EQ(t.variance_d, 2.0 / 9.0);
  EXPECT_BITS_EQ(t.m2, 2.0f / 3.0f);
}

TEST(ExactMoments, LargeOffsetDoesNotCancel) {
  // 1e8 + {0.5, 1.5, ...}: the textbook E[x^2] - E[x]^2 in double loses everything; exact doesn't.
  std::vector<double> x;
  for (int i = 0; i < 10; ++i) x.push_back(1e8 + i + 0.5);
  const auto m = exact_moments<double>(x);
  EXPECT_EQ(m.mean, 1e8 + 5.0);
  EXPECT_EQ(m.variance, 8.25);  // variance of 0..9 = (100 - 1) / 12
  EXPECT_EQ(m.m2, 82.5);
}

TEST(ExactMoments, SubnormalRoundingFloat) {
  const float s = std::ldexp(1.0f, -149);
  EXPECT_BITS_EQ(em<float>({s, 0}).mean, 0.0f);                 // 2^-150: tie -> even (0)
  EXPECT_EQ(em<float>({s, 0}).mean_d, std::ldexp(1.0, -150));   // exact in double
  EXPECT_BITS_EQ(em<float>({3 * s, 0}).mean, 2 * s);            // 1.5 * 2^-149: tie -> even
  EXPECT_BITS_EQ(em<float>({s, s, 0}).mean, s);                 // 2/3 * 2^-149 -> 2^-149
  EXPECT_BITS_EQ(em<float>({s, 0, 0}).mean, 0.0f);              // 1/3 * 2^-149 -> 0
  EXPECT_BITS_EQ(em<float>({-s, -s, 0}).mean, -s);
  EXPECT_BITS_EQ(em<float>({-s, 0}).mean, -0.0f);               // rounds to zero, keeps its sign
  // Variance deep below the subnormal range rounds to +0 (in float and in double).
  EXPECT_BITS_EQ(em<float>({s, 0}).variance, 0.0f);
  EXPECT_EQ(em<float>({s, 0}).variance_d, std::ldexp(1.0, -300));  // (2^-150)^2, exact in double
  // Variance near the bottom of float's range: {0, 2^-62}: variance 2^-126 (normal),
  // {0, 2^-63}: 2^-128 (subnormal, exact), {0, 3 * 2^-76}: 9 * 2^-154 -> 0.28 * 2^-149 -> 0.
  EXPECT_BITS_EQ(em<float>({0, std::ldexp(1.0f, -62)}).variance, std::ldexp(1.0f, -126));
  EXPECT_BITS_EQ(em<float>({0, std::ldexp(1.0f, -63)}).variance, std::ldexp(1.0f, -128));
  EXPECT_BITS_EQ(em<float>({0, 3 * std::ldexp(1.0f, -76)}).variance, 0.0f);
  // 5 * 2^-76 and 0: variance 25 * 2^-154 = 0.78 * 2^-149 -> 2^-149.
  EXPECT_BITS_EQ(em<float>({0, 5 * std::ldexp(1.0f, -76)}).variance, s);
}

TEST(ExactMoments, SubnormalRoundingDouble) {
  const double s = std::ldexp(1.0, -1074);
  EXPECT_BITS_EQ(em<double>({s, 0}).mean, 0.0);
  EXPECT_BITS_EQ(em<double>({3 * s, 0}).mean, 2 * s);
  EXPECT_BITS_EQ(em<double>({s, s, 0}).mean, s);
  EXPECT_BITS_EQ(em<double>({5 * s, 0, 0}).mean, 2 * s);  // 5/3 -> 2
  // (2.5 * 2^-538)^2 = 1.5625 * 2^-1074 -> 2 * 2^-1074; (1.5 * 2^-538)^2 = 0.5625 -> 2^-1074.
  EXPECT_BITS_EQ(em<double>({0, 5 * std::ldexp(1.0, -538)}).variance, 2 * s);
  EXPECT_BITS_EQ(em<double>({0, 3 * std::ldexp(1.0, -538)}).variance, s);
}

TEST(ExactMoments, OverflowToInfinity) {
  const float fmax = std::numeric_limits<float>::max();
  auto f = em<float>({-fmax, fmax});
  EXPECT_BITS_EQ(f.mean, 0.0f);
  EXPECT_TRUE(std::isinf(f.variance) && f.variance > 0);
  EXPECT_EQ(f.variance_d, double(fmax) * double(fmax));
  EXPECT_TRUE(std::isinf(f.mean_square));
  f = em<float>({fmax, fmax});
  EXPECT_EQ(f.mean, fmax);  // the mean never overflows
  EXPECT_BITS_EQ(f.variance, 0.0f);
  const double dmax = std::numeric_limits<double>::max();
  const auto d = em<double>({-dmax, dmax, dmax});
  EXPECT_TRUE(std::isinf(d.variance));
  EXPECT_BITS_EQ(d.mean, dmax / 3);  // IEEE division of the exact max by 3 is correctly rounded
}

TEST(ExactMoments, Specials) {
  auto m = em<float>({});
  EXPECT_TRUE(std::isnan(m.mean) && std::isnan(m.variance) && std::isnan(m.m2_d));
  m = em<float>({1, std::numeric_limits<float>::quiet_NaN()});
  EXPECT_TRUE(std::isnan(m.mean) && std::isnan(m.variance));
  const float inf = std::numeric_limits<float>::infinity();
  m = em<float>({1, -inf});
  EXPECT_BITS_EQ(m.mean, -inf);
  EXPECT_BITS_EQ(m.mean_square, inf);
  EXPECT_TRUE(std::isnan(m.variance) && std::isnan(m.m2));
  m = em<float>({inf, -inf});
  EXPECT_TRUE(std::isnan(m.mean));
  m = em<float>({-0.0f, -0.0f});
  EXPECT_BITS_EQ(m.mean, -0.0f);
  EXPECT_BITS_EQ(m.mean_d, -0.0);
  EXPECT_BITS_EQ(m.variance, 0.0f);
  m = em<float>({-1.0f, 1.0f});
  EXPECT_BITS_EQ(m.mean, 0.0f);
  EXPECT_EQ(m.variance, 1.0f);
}

TEST(ExactMoments, Rows) {
  const std::vector<float> data{1, 2, 3, 4, 10, 10, 10, 10, -1, 0, 0, 1};
  const auto rows = exact_row_moments<float>(data, 3, 4);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].variance, 1.25f);
  EXPECT_EQ(rows[1].variance, 0.0f);
  EXPECT_EQ(rows[1].mean, 10.0f);
  EXPECT_EQ(rows[2].variance, 0.5f);
  EXPECT_THROW(exact_row_moments<float>(data, 5, 3), std::invalid_argument);
  EXPECT_TRUE(exact_row_moments<float>(std::span<const float>(), 0, 7).empty());
}

// --- independent oracle: GMP rationals, two-pass --------------------------------------------

// Correct rounding of a rational q to T: bracket q in [lo, hi] with 400-bit directed roundings,
// and require both ends to round to the same T (else q is too close to a tie to decide; the
// denominators here are tiny, so that never happens unless q IS the tie, when lo == hi).
template <class T> T round_rational(const mpq_t q) {
  mpfr_t lo, hi;
  mpfr_inits2(400, lo, hi, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_q(lo, q, MPFR_RNDD);
  mpfr_set_q(hi, q, MPFR_RNDU);
  T a, b;
  if constexpr (sizeof(T) == 4) {
    a = mpfr_get_flt(lo, MPFR_RNDN), b = mpfr_get_flt(hi, MPFR_RNDN);
  } else {
    a = mpfr_get_d(lo, MPFR_RNDN), b = mpfr_get_d(hi, MPFR_RNDN);
  }
  EXPECT_TRUE(same_bits(a, b) || (a == 0 && b == 0)) << "undecided rounding";
  mpfr_clears(lo, hi, static_cast<mpfr_ptr>(nullptr));
  return b;  // the upper end keeps +0 for a zero variance
}

template <class T> void check_against_rationals(const std::vector<T>& x) {
  const auto n = static_cast<unsigned long>(x.size());
  mpq_t mean, d, m2, var, tmp;
  mpq_inits(mean, d, m2, var, tmp, static_cast<mpq_ptr>(nullptr));
  for (T e : x) {
    mpq_set_d(tmp, double(e));  // exact
    mpq_add(mean, mean, tmp);
  }
  mpq_set_ui(tmp, n, 1);
  mpq_div(mean, mean, tmp);
  for (T e : x) {
    mpq_set_d(d, double(e));
    mpq_sub(d, d, mean);
    mpq_mul(d, d, d);
    mpq_add(m2, m2, d);
  }
  mpq_div(var, m2, tmp);
  const auto m = exact_moments<T>(x);
  // Means compare with == (a zero mean's sign comes from the IEEE sum rule, not the rational).
  EXPECT_EQ(m.mean, round_rational<T>(mean));
  EXPECT_EQ(m.mean_d, round_rational<double>(mean));
  EXPECT_BITS_EQ(m.m2, round_rational<T>(m2));
  EXPECT_BITS_EQ(m.variance, round_rational<T>(var));
  EXPECT_BITS_EQ(m.variance_d, round_rational<double>(var));
  mpq_clears(mean, d, m2, var, tmp, static_cast<mpq_ptr>(nullptr));
}

template <class T> std::vector<T> random_values(std::mt19937_64& rng, std::size_t n, int lo, int hi,
                                                T offset) {
  std::uniform_real_distribution<T> mant(T(1), T(2));
  std::uniform_int_distribution<int> ex(lo, hi);
  std::bernoulli_distribution sign(0.5);
  std::vector<T> v(n);
  for (auto& e : v) e = offset + (sign(rng) ? T(-1) : T(1)) * std::ldexp(mant(rng), ex(rng));
  return v;
}

TEST(ExactMoments, MatchesTwoPassRationals) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 150; ++trial) {
    const std::size_t n = 1 + rng() % 200;
    check_against_rationals(random_values<float>(rng, n, -20, 20, 0.0f));
    check_against_rationals(random_values<float>(rng, n, -149, -120, 0.0f));  // subnormal range
    check_against_rationals(random_values<float>(rng, n, -10, 0, 1000.0f));   // offset mean
    check_against_rationals(random_values<double>(rng, n, -60, 60, 0.0));
    check_against_rationals(random_values<double>(rng, n, -1074, -1000, 0.0));
    check_against_rationals(random_values<double>(rng, n, -30, -10, 1e6));
  }
}

}  // namespace
