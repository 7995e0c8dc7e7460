// reference/mpfr_sum: hand-made cases with known answers (ties, subnormals, overflow, signed
// zeros, NaN/Inf), cross-checks against two independent oracles (a plain sequence of exact
// mpfr_add at high precision fed by mpfr_set_d, and a 128-bit integer fixed-point sum with one
// integer -> T conversion), and the metrics of `measure` on known values.
#include "reference/mpfr_sum.hpp"

#include "core/exact_sum.hpp"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <ctime>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "core/float_traits.hpp"

namespace {

using sumlab::FloatTraits;
using sumlab::reference::correctly_rounded_sum;
using sumlab::reference::exact_sum_as_double;
using sumlab::reference::measure;

template <class T> T crs(std::vector<T> v) {
  return correctly_rounded_sum<T>(std::span<const T>(v));
}
template <class T> bool same_bits(T a, T b) { return sumlab::to_bits(a) == sumlab::to_bits(b); }

#define EXPECT_BITS_EQ(a, b) EXPECT_PRED2((same_bits<std::decay_t<decltype(a)>>), a, b)

constexpr float kFMax = std::numeric_limits<float>::max();
constexpr double kDMax = std::numeric_limits<double>::max();
constexpr float kFInf = std::numeric_limits<float>::infinity();
constexpr double kDInf = std::numeric_limits<double>::infinity();

TEST(CorrectlyRoundedSum, TieToEvenAndStickyFloat) {
  const float one = 1.0f, h = std::ldexp(1.0f, -24), t = std::ldexp(1.0f, -40);
  EXPECT_BITS_EQ(crs<float>({one, h}), one);                              // tie -> even (1)
  EXPECT_BITS_EQ(crs<float>({one, h, t}), std::ldexp(1.0f, -23) + one);   // just above the tie
  EXPECT_BITS_EQ(crs<float>({one, h, -t}), one);                          // just below the tie
  const float odd = 1.0f + std::ldexp(1.0f, -23);
  EXPECT_BITS_EQ(crs<float>({odd, h}), 1.0f + std::ldexp(1.0f, -22));     // tie -> even (up)
  // The order of the terms does not matter to an exact sum.
  EXPECT_BITS_EQ(crs<float>({h, t, one}), std::ldexp(1.0f, -23) + one);
}

TEST(CorrectlyRoundedSum, TieToEvenAndStickyDouble) {
  const double one = 1.0, h = std::ldexp(1.0, -53), t = std::ldexp(1.0, -80);
  EXPECT_BITS_EQ(crs<double>({one, h}), one);
  EXPECT_BITS_EQ(crs<double>({one, h, t}), one + std::ldexp(1.0, -52));
  EXPECT_BITS_EQ(crs<double>({one, h, -t}), one);
  // Far-apart exponents: 2^1000 + 1 - 2^1000 = 1 exactly.
  EXPECT_BITS_EQ(crs<double>({std::ldexp(1.0, 1000), 1.0, -std::ldexp(1.0, 1000)}), 1.0);
  EXPECT_BITS_EQ(crs<double>({std::ldexp(1.0, 1023), std::ldexp(1.0, -1074),
                              -std::ldexp(1.0, 1023)}),
                 std::ldexp(1.0, -1074));
}

TEST(CorrectlyRoundedSum, SubnormalResults) {
  const float fs = std::ldexp(1.0f, -149), fmin = std::ldexp(1.0f, -126);
  EXPECT_BITS_EQ(crs<float>({fs, fs, fs}), 3 * fs);
  EXPECT_BITS_EQ(crs<float>({fmin, -fs}), fmin - fs);  // largest subnormal
  EXPECT_BITS_EQ(crs<float>({1.0f, fs, -1.0f}), fs);
  EXPECT_BITS_EQ(crs<float>({-1.0f, -fs, 1.0f}), -fs);
  const double ds = std::ldexp(1.0, -1074), dmin = std::ldexp(1.0, -1022);
  EXPECT_BITS_EQ(crs<double>({dmin, -ds}), dmin - ds);
  EXPECT_BITS_EQ(crs<double>({1.0, ds, -1.0, ds}), 2 * ds);
}

TEST(CorrectlyRoundedSum, OverflowFollowsIeee) {
  EXPECT_BITS_EQ(crs<float>({kFMax, kFMax}), kFInf);
  EXPECT_BITS_EQ(crs<float>({-kFMax, -kFMax}), -kFInf);
  EXPECT_BITS_EQ(crs<float>({kFMax, kFMax, -kFMax}), kFMax);  // the exact sum comes back in range
  // ulp(max) = 2^104: max + 2^103 is the overflow threshold (a tie, rounds to "even" = 2^128).
  EXPECT_BITS_EQ(crs<float>({kFMax, std::ldexp(1.0f, 103)}), kFInf);
  EXPECT_BITS_EQ(crs<float>({kFMax, std::ldexp(1.0f, 103), -std::ldexp(1.0f, -149)}), kFMax);
  EXPECT_BITS_EQ(crs<double>({kDMax, kDMax}), kDInf);
  EXPECT_BITS_EQ(crs<double>({kDMax, std::ldexp(1.0, 970)}), kDInf);
  EXPECT_BITS_EQ(crs<double>({kDMax, std::ldexp(1.0, 970), -std::ldexp(1.0, -1074)}), kDMax);
  // 2^20 copies of max: far beyond the range of T, yet held exactly.
  std::vector<double> many(std::size_t(1) << 20, kDMax);
  many.push_back(-kDMax);
  EXPECT_BITS_EQ(correctly_rounded_sum<double>(many), kDInf);
  EXPECT_EQ(exact_sum_as_double<float>(std::vector<float>{kFMax, kFMax}), 2.0 * double(kFMax));
}

TEST(CorrectlyRoundedSum, SignedZeros) {
  EXPECT_BITS_EQ(crs<float>({}), 0.0f);
  EXPECT_BITS_EQ(crs<float>({-0.0f}), -0.0f);
  EXPECT_BITS_EQ(crs<float>({-0.0f, -0.0f, -0.0f}), -0.0f);
  EXPECT_BITS_EQ(crs<float>({-0.0f, 0.0f}), 0.0f);
  EXPECT_BITS_EQ(crs<float>({0.0f}), 0.0f);
  EXPECT_BITS_EQ(crs<float>({1.0f, -1.0f}), 0.0f);
  EXPECT_BITS_EQ(crs<float>({-1.0f, 1.0f, -0.0f}), 0.0f);
  EXPECT_BITS_EQ(crs<double>({}), 0.0);
  EXPECT_BITS_EQ(crs<double>({-0.0}), -0.0);
  EXPECT_BITS_EQ(crs<double>({-0.0, 0.0}), 0.0);
  EXPECT_BITS_EQ(crs<double>({-kDMax, kDMax}), 0.0);
  EXPECT_BITS_EQ(exact_sum_as_double<float>(std::vector<float>{-0.0f}), -0.0);
}

TEST(CorrectlyRoundedSum, NanAndInfinities) {
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(crs<float>({1.0f, fnan})));
  EXPECT_TRUE(std::isnan(crs<float>({kFInf, -kFInf})));
  EXPECT_TRUE(std::isnan(crs<float>({kFInf, fnan})));
  EXPECT_BITS_EQ(crs<float>({kFInf, 1.0f}), kFInf);
  EXPECT_BITS_EQ(crs<float>({kFInf, kFInf, -kFMax}), kFInf);
  EXPECT_BITS_EQ(crs<float>({-kFInf, kFMax, kFMax}), -kFInf);
  EXPECT_TRUE(std::isnan(crs<double>({std::numeric_limits<double>::quiet_NaN()})));
  EXPECT_TRUE(std::isnan(crs<double>({-kDInf, 2.0, kDInf})));
  EXPECT_BITS_EQ(crs<double>({-kDInf, -kDInf}), -kDInf);
}

// --- independent oracles ---------------------------------------------------------------------

// A plain sequence of mpfr_add at 4096 bits fed by mpfr_set_d: exact for any finite float/double
// inputs (n < 2^900), then one mpfr_get_d / mpfr_get_flt.
template <class T> T oracle_mpfr_sequence(const std::vector<T>& x) {
  mpfr_t acc, v;
  mpfr_init2(acc, 4096);
  mpfr_init2(v, 64);
  mpfr_set_zero(acc, 1);
  for (T e : x) {
    mpfr_set_d(v, double(e), MPFR_RNDN);
    EXPECT_EQ(mpfr_add(acc, acc, v, MPFR_RNDN), 0);
  }
  T r;
  if constexpr (sizeof(T) == 4) r = mpfr_get_flt(acc, MPFR_RNDN);
  else r = mpfr_get_d(acc, MPFR_RNDN);
  mpfr_clear(acc);
  mpfr_clear(v);
  return r;
}

// Values +-m * 2^e with e in [-E, E]: fixed point in units of 2^-(E + p - 1) fits in __int128 for
// the sizes used; int128 -> T is one correctly rounded conversion (libgcc), then an exact scaling.
__extension__ typedef __int128 int128;
template <class T> T oracle_int128(const std::vector<T>& x, int unit_exp) {
  int128 acc = 0;
  for (T e : x) acc += static_cast<int128>(std::ldexp(static_cast<long double>(e), -unit_exp));
  return std::ldexp(static_cast<T>(acc), unit_exp);
}

template <class T> std::vector<T> random_wide(std::mt19937_64& rng, std::size_t n, int lo, int hi) {
  std::uniform_real_distribution<T> mant(T(1), T(2));
  std::uniform_int_distribution<int> ex(lo, hi);
  std::bernoulli_distribution sign(0.5);
  std::vector<T> v(n);
  for (auto& e : v) e = (sign(rng) ? T(-1) : T(1)) * std::ldexp(mant(rng), ex(rng));
  return v;
}

TEST(CorrectlyRoundedSum, MatchesMpfrSequenceOverTheWholeRange) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng() % 300;
    auto f = random_wide<float>(rng, n, -149, 127);
    auto d = random_wide<double>(rng, n, -1074, 1023);
    if (trial % 3 == 0) {  // force heavy cancellation: append the negated prefix, keep a tail
      for (std::size_t i = 0; i + 1 < n; ++i) { f.push_back(-f[i]); d.push_back(-d[i]); }
    }
    std::shuffle(f.begin(), f.end(), rng);
    std::shuffle(d.begin(), d.end(), rng);
    EXPECT_BITS_EQ(correctly_rounded_sum<float>(f), oracle_mpfr_sequence(f)) << "trial " << trial;
    EXPECT_BITS_EQ(correctly_rounded_sum<double>(d), oracle_mpfr_sequence(d)) << "trial " << trial;
  }
}

TEST(CorrectlyRoundedSum, MatchesInt128FixedPoint) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng() % 1000;
    auto f = random_wide<float>(rng, n, -40, 40);
    auto d = random_wide<double>(rng, n, -30, 30);
    if (trial % 2 == 0) {
      for (std::size_t i = 0; i + 1 < n; ++i) { f.push_back(-f[i]); d.push_back(-d[i]); }
      std::shuffle(f.begin(), f.end(), rng);
      std::shuffle(d.begin(), d.end(), rng);
    }
    EXPECT_BITS_EQ(correctly_rounded_sum<float>(f), oracle_int128(f, -40 - 23) + 0.0f);
    EXPECT_BITS_EQ(correctly_rounded_sum<double>(d), oracle_int128(d, -30 - 52) + 0.0);
  }
}

TEST(CorrectlyRoundedSum, ChunkBoundariesAndLargeN) {
  // 3 * 2^16 + 5 elements crosses chunk boundaries; 0.1f is inexact so the sum needs all chunks.
  const std::size_t n = 3 * (std::size_t(1) << 16) + 5;
  std::vector<float> f(n, 0.1f);
  std::vector<double> d(n, 0.1);
  const double exact_f = double(0.1f) * double(n);  // exact: 24 bits x 18 bits < 53 bits
  EXPECT_BITS_EQ(correctly_rounded_sum<float>(f), float(exact_f));
  EXPECT_EQ(exact_sum_as_double<float>(f), exact_f);
  EXPECT_BITS_EQ(correctly_rounded_sum<double>(d), oracle_mpfr_sequence(d));
}

// --- measure ---------------------------------------------------------------------------------

TEST(Measure, OneUlpAboveAnExactSum) {
  const std::vector<float> x{1.0f, 2.0f};
  const float computed = std::nextafter(3.0f, 4.0f);
  const auto m = measure<float>(x, computed);
  EXPECT_FALSE(m.special);
  EXPECT_EQ(m.exact, 3.0);
  EXPECT_EQ(m.rounded, 3.0);
  EXPECT_EQ(m.abs_error, std::ldexp(1.0, -22));
  EXPECT_EQ(m.ulps, 1.0);
  EXPECT_DOUBLE_EQ(m.rel_error, std::ldexp(1.0, -22) / 3.0);
  EXPECT_NEAR(m.correct_bits, 22 + std::log2(3.0), 1e-12);
  EXPECT_EQ(m.sum_abs, 3.0);
  EXPECT_EQ(m.condition, 1.0);
  const auto exact = measure<float>(x, 3.0f);
  EXPECT_EQ(exact.abs_error, 0.0);
  EXPECT_EQ(exact.ulps, 0.0);
  EXPECT_EQ(exact.correct_bits, 24.0);
}

TEST(Measure, HalfUlpWhenTheExactSumIsATie) {
  const std::vector<double> x{1.0, std::ldexp(1.0, -53)};
  const auto m = measure<double>(x, 1.0);
  EXPECT_EQ(m.rounded, 1.0);
  EXPECT_EQ(m.exact, 1.0);  // 1 + 2^-53 rounded to double for display
  EXPECT_EQ(m.abs_error, std::ldexp(1.0, -53));
  EXPECT_EQ(m.ulps, 0.5);
  const auto up = measure<double>(x, std::nextafter(1.0, 2.0));
  EXPECT_EQ(up.ulps, 0.5);
}

TEST(Measure, CancellationAndZeroSums) {
  const std::vector<float> x{1.0f, -1.0f};
  auto m = measure<float>(x, 0.0f);
  EXPECT_EQ(m.rel_error, 0.0);
  EXPECT_EQ(m.correct_bits, 24.0);
  EXPECT_TRUE(std::isinf(m.condition));
  m = measure<float>(x, std::ldexp(1.0f, -149));
  EXPECT_TRUE(std::isinf(m.rel_error));
  EXPECT_EQ(m.correct_bits, 0.0);
  EXPECT_EQ(m.ulps, 1.0);  // ulp(0) is the smallest subnormal
  // Condition of a nearly cancelling sum: (1 + 1 + 2^-20) / 2^-20.
  const std::vector<double> y{1.0, -1.0, std::ldexp(1.0, -20)};
  EXPECT_EQ(measure<double>(y, 0.0).condition, 2 * std::ldexp(1.0, 20) + 1);
  EXPECT_EQ(measure<double>(std::vector<double>{}, 0.0).condition, 1.0);
  // Subnormal ulp below the normal range: exact 2^-1074 * 5, computed 2^-1074 * 3.
  const double s = std::ldexp(1.0, -1074);
  EXPECT_EQ(measure<double>(std::vector<double>{5 * s}, 3 * s).ulps, 2.0);
}

TEST(Measure, SpecialValues) {
  auto m = measure<float>(std::vector<float>{1.0f, 2.0f}, kFInf);
  EXPECT_TRUE(m.special);
  EXPECT_EQ(m.exact, 3.0);
  EXPECT_TRUE(std::isnan(m.ulps));
  m = measure<float>(std::vector<float>{1.0f, kFInf}, kFInf);
  EXPECT_TRUE(m.special);
  EXPECT_TRUE(std::isinf(m.rounded));
  m = measure<double>(std::vector<double>{1.0, std::numeric_limits<double>::quiet_NaN()}, 1.0);
  EXPECT_TRUE(m.special);
  EXPECT_TRUE(std::isnan(m.rounded));
  // An exact sum beyond the range of T is not special: ulps count in ulp(max) = 2^104.
  m = measure<float>(std::vector<float>{kFMax, kFMax}, kFMax);
  EXPECT_FALSE(m.special);
  EXPECT_TRUE(std::isinf(m.rounded));
  EXPECT_EQ(m.ulps, std::ldexp(1.0, 24) - 1);
}

// Not a correctness test: run with --gtest_also_run_disabled_tests to print ns/element (process
// CPU time, which a loaded machine inflates less than wall time).
template <class T> void time_reference(std::size_t n) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g;
  std::vector<T> x(n);
  for (auto& e : x) e = T(g(rng));
  (void)correctly_rounded_sum<T>(std::span<const T>(x.data(), 1000));  // warm the workspace
  const std::clock_t c0 = std::clock();
  const T s = correctly_rounded_sum<T>(x);
  const std::clock_t c1 = std::clock();
  const auto m = measure<T>(x, s);
  const std::clock_t c2 = std::clock();
  auto ns = [n](std::clock_t a, std::clock_t b) {
    return 1e9 * double(b - a) / CLOCKS_PER_SEC / double(n);
  };
  std::printf("%s n=%zu: correctly_rounded_sum %.2f ns/element, measure %.2f ns/element "
              "(ulps %g)\n", FloatTraits<T>::dtype.data(), n, ns(c0, c1), ns(c1, c2), m.ulps);
}

TEST(ReferenceSpeed, DISABLED_NsPerElementAt2Pow24) {
  time_reference<float>(std::size_t(1) << 24);
  time_reference<double>(std::size_t(1) << 24);
}

}  // namespace

// ExactSum (one exact sum, many measurements) agrees with measure() field for field, and the
// threaded accumulation of a large input (split over threads above 2^22 elements) agrees bit for
// bit with core's independent superaccumulator.
TEST(ExactSumObject, MatchesMeasureAndThreadedPathMatchesSuperaccumulator) {
  std::vector<double> x(std::size_t{1} << 23);
  std::uint64_t state = 12345;
  for (auto& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = std::ldexp(static_cast<double>(state >> 11), static_cast<int>((state >> 3) % 120) - 60 - 53) *
        ((state & 1) ? -1.0 : 1.0);
  }
  const sumlab::reference::ExactSum<double> exact(x);
  const double core = sumlab::exact_sum<double>(x);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(exact.rounded()), std::bit_cast<std::uint64_t>(core));
  for (double c : {core, std::nextafter(core, 0.0), 0.0}) {
    const auto a = exact.measure(c);
    const auto b = sumlab::reference::measure<double>(x, c);
    EXPECT_EQ(a.abs_error, b.abs_error);
    EXPECT_EQ(a.ulps, b.ulps);
    EXPECT_EQ(a.condition, b.condition);
  }
}

// ExactSum built from exact totals (the sum's and the magnitudes' limbs, as gpu_exact brings them
// from the device) measures every result as ExactSum of the data does, field for field, on data
// that exercises each path: cancellation over a wide exponent range, subnormals, an exact sum past
// the largest finite value, signed zeros, the empty input and every special.
namespace {

template <class T> class ExactSumFromTotals : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ExactSumFromTotals, Floats);

template <class T> std::vector<std::vector<T>> hostile_inputs() {
  constexpr T inf = std::numeric_limits<T>::infinity(), big = std::numeric_limits<T>::max();
  constexpr T tiny = std::numeric_limits<T>::denorm_min();
  std::vector<T> wide(100003);
  std::mt19937_64 rng(7);
  for (auto& v : wide) {
    const int e = static_cast<int>(rng() % 200) - 100;
    v = std::ldexp(static_cast<T>(rng() % 1000003), e) * ((rng() & 1) ? T(-1) : T(1));
  }
  std::vector<T> cancelling = wide;
  for (T v : wide) cancelling.push_back(-v);
  cancelling.push_back(tiny);
  return {{}, {T(-0.0)}, {T(-0.0), T(-0.0)}, {T(-0.0), T(0.0)}, {T(1.5)}, {tiny, tiny, -tiny * 3},
          {big, big, -big / 2}, {-big, -big}, wide, cancelling, {T(1), inf}, {T(1), -inf},
          {inf, -inf}, {T(2), std::numeric_limits<T>::quiet_NaN()}};
}

bool same_or_both_nan(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

}  // namespace

TYPED_TEST(ExactSumFromTotals, MeasuresLikeTheDataItself) {
  using T = TypeParam;
  for (const auto& x : hostile_inputs<T>()) {
    sumlab::Superaccumulator<T> sum, sum_abs;
    sum.add(std::span<const T>(x));
    std::vector<T> magnitudes(x.size());
    std::transform(x.begin(), x.end(), magnitudes.begin(), [](T v) { return std::fabs(v); });
    sum_abs.add(std::span<const T>(magnitudes));
    const sumlab::reference::ExactSum<T> direct(x), from_totals(sum, sum_abs);
    SCOPED_TRACE(::testing::Message() << x.size() << " values, exact sum " << direct.rounded());
    EXPECT_TRUE(same_or_both_nan(from_totals.rounded(), direct.rounded()));
    EXPECT_TRUE(from_totals.same_exact(direct));
    // One smallest subnormal off: the same rounding almost always, but not the same exact sum.
    sumlab::Superaccumulator<T> off = sum;
    off.add_limb(0, 1);
    EXPECT_FALSE(sumlab::reference::ExactSum<T>(off, sum_abs).same_exact(direct));
    const T r = static_cast<T>(direct.rounded());
    for (T c : {r, std::nextafter(r, T(0)), T(0), T(-0.0), std::numeric_limits<T>::max(), T(3)}) {
      const auto a = from_totals.measure(c), b = direct.measure(c);
      for (auto [u, v] : {std::pair{a.exact, b.exact}, {a.rounded, b.rounded}, {a.abs_error, b.abs_error},
                          {a.rel_error, b.rel_error}, {a.ulps, b.ulps}, {a.correct_bits, b.correct_bits},
                          {a.sum_abs, b.sum_abs}, {a.condition, b.condition}})
        EXPECT_TRUE(same_or_both_nan(u, v)) << u << " vs " << v << " for computed " << c;
      EXPECT_EQ(a.special, b.special);
      EXPECT_EQ(a.input_special, b.input_special);
      EXPECT_EQ(a.exact_overflows, b.exact_overflows);
    }
  }
}
