// core/fixed_point_sum: order independence (bits), exactness on the grid (bits, against MPFR),
// the documented error bound against MPFR on random inputs, and the report: overflow, dropped
// bits, specials.
#include "core/fixed_point_sum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "core/float_traits.hpp"
#include "reference/mpfr_sum.hpp"

namespace {

using sumlab::FixedPointOutcome;
using sumlab::FloatTraits;
using sumlab::hex_bits;

#define EXPECT_BITS_EQ(a, b) EXPECT_EQ(hex_bits(a), hex_bits(b))

template <class T>
FixedPointOutcome<T> run(const std::vector<T>& x, std::optional<int> k = std::nullopt) {
  return sumlab::fixed_point_sum_with_report<T>(std::span<const T>(x), k);
}
template <class T> T reference_sum(const std::vector<T>& x) {
  return sumlab::reference::correctly_rounded_sum<T>(std::span<const T>(x));
}

template <class T> std::vector<T> lognormal_signed(std::mt19937_64& g, std::size_t n, T sigma) {
  std::lognormal_distribution<T> d(T(0), sigma);
  std::vector<T> x(n);
  for (auto& v : x) v = (g() & 1) ? d(g) : -d(g);
  return x;
}

template <class T> class FixedPointSum : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FixedPointSum, Types);

TYPED_TEST(FixedPointSum, OrderIndependent) {
  using T = TypeParam;
  std::mt19937_64 g(1);
  for (T sigma : {T(1), T(6)}) {
    std::vector<T> x = lognormal_signed<T>(g, 5001, sigma);
    for (std::optional<int> k : {std::optional<int>(), std::optional<int>(10)}) {
      const auto first = run(x, k);
      // The coarse caller scale makes elements lose bits, so rounding is exercised.
      if (k) {
        EXPECT_GT(first.report.inexact_elements, 0u);
      }
      for (int r = 0; r < 20; ++r) {
        std::shuffle(x.begin(), x.end(), g);
        const auto again = run(x, k);
        EXPECT_BITS_EQ(again.sum.value, first.sum.value);
        EXPECT_EQ(again.sum.diagnostics, first.sum.diagnostics);
      }
    }
  }
}

TYPED_TEST(FixedPointSum, ExactOnTheGrid) {
  using T = TypeParam;
  // Multiples of 2^-f below 2^w: on the grid of the derived scale, so the sum is exact and the
  // result is the correctly rounded exact sum.
  const int f = sizeof(T) == 8 ? 20 : 6, w = sizeof(T) == 8 ? 30 : 15;
  std::mt19937_64 g(2);
  for (int r = 0; r < 200; ++r) {
    std::vector<T> x(1 + g() % 2000);
    for (auto& v : x) {
      const auto i = static_cast<std::int64_t>(g() % (std::uint64_t(1) << (w + f))) *
                     ((g() & 1) ? 1 : -1);
      v = std::ldexp(static_cast<T>(i), -f);  // exact: w + f <= p bits
    }
    const auto out = run(x);
    EXPECT_EQ(out.report.inexact_elements, 0u);
    EXPECT_EQ(out.sum.extra_error_bound, 0.0);
    EXPECT_FALSE(out.report.overflow);
    EXPECT_BITS_EQ(out.sum.value, reference_sum(x));
  }
}

TYPED_TEST(FixedPointSum, DerivedScaleKeepsQuantisedBelow2To62) {
  using T = TypeParam;
  std::vector<T> x = {std::numeric_limits<T>::max(), -std::numeric_limits<T>::max()};
  auto out = run(x);
  EXPECT_EQ(out.report.scale_exponent, 61 - std::numeric_limits<T>::max_exponent + 1);
  EXPECT_FALSE(out.report.overflow);
  EXPECT_BITS_EQ(out.sum.value, T(0));
  x = {std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::denorm_min()};
  out = run(x);
  EXPECT_EQ(out.report.scale_exponent, 61 - FloatTraits<T>::min_subnormal_exp);
  EXPECT_BITS_EQ(out.sum.value, T(2) * std::numeric_limits<T>::denorm_min());
  // Every input the largest finite value: q = max * 2^k < 2^62, and n of them still fit.
  x = std::vector<T>(1000, std::numeric_limits<T>::max());
  out = run(x);
  EXPECT_FALSE(out.report.overflow);
  EXPECT_BITS_EQ(out.sum.value, std::numeric_limits<T>::infinity());
}

TYPED_TEST(FixedPointSum, ErrorWithinDocumentedBound) {
  using T = TypeParam;
  std::mt19937_64 g(3);
  int inexact_cases = 0;
  for (int r = 0; r < 1200; ++r) {
    std::vector<T> x = lognormal_signed<T>(g, 1 + g() % 500, T(1 + r % 7));
    // The derived scale, or a coarser one chosen by the caller (many elements lose bits).
    std::optional<int> k;
    if (r % 2) k = run(x).report.scale_exponent - 1 - static_cast<int>(g() % 40);
    const auto out = run(x, k);
    ASSERT_FALSE(out.report.overflow);
    if (out.report.inexact_elements != 0) ++inexact_cases;
    const T value = out.sum.value;
    const auto m = sumlab::reference::measure<T>(std::span<const T>(x), value);
    // |err| <= m 2^(-k-1) + (half an ulp of the result: the one final rounding), with a hair of
    // slack for abs_error itself being rounded to double once.
    const double bound =
        (out.sum.extra_error_bound + 0.5 * static_cast<double>(sumlab::ulp(value))) *
        (1 + std::ldexp(1.0, -50));
    EXPECT_LE(m.abs_error, bound) << "round " << r << ": " << out.sum.diagnostics;
    EXPECT_EQ(out.sum.extra_error_bound,
              std::ldexp(static_cast<double>(out.report.inexact_elements),
                         -out.report.scale_exponent - 1));
  }
  EXPECT_GT(inexact_cases, 500);
}

TYPED_TEST(FixedPointSum, OverflowWithTooLargeCallerScale) {
  using T = TypeParam;
  const std::vector<T> x = {T(1), T(2), T(-3), T(0.5)};
  const auto out = run(x, 62);  // 2 * 2^62 = 2^63 and 3 * 2^62 do not fit
  EXPECT_TRUE(out.report.overflow);
  EXPECT_EQ(out.report.saturated_elements, 2u);
  EXPECT_FALSE(out.report.scale_from_data);
  EXPECT_EQ(out.sum.extra_error_bound, std::numeric_limits<double>::infinity());
  EXPECT_NE(out.sum.diagnostics.find("OVERFLOW"), std::string::npos) << out.sum.diagnostics;
  // Absurd scales are reported, never undefined behaviour.
  for (int k : {std::numeric_limits<int>::max(), std::numeric_limits<int>::min(), 5000, -5000}) {
    const auto o = run(x, k);
    EXPECT_EQ(o.report.overflow, k > 0) << k;
  }
  const auto fine = run(x, 60);
  EXPECT_FALSE(fine.report.overflow);
  EXPECT_BITS_EQ(fine.sum.value, T(0.5));
}

TYPED_TEST(FixedPointSum, DroppedBitsReport) {
  using T = TypeParam;
  // Grid 2^-8. Bits lost = significand positions from the lowest set bit up to the grid:
  // 1 + 2^-10 loses positions 2^-10, 2^-9 -> 2 bits (rounds to 1);
  // 3 * 2^-12 = 0b11 * 2^-12 loses its whole 2-bit significand -> 2 bits (rounds to 0);
  // 1 + 2^-20 loses positions 2^-20 .. 2^-9 -> 12 bits (rounds to 1);
  // 0.5 and 2^-8 are on the grid.
  const T one = T(1);
  const std::vector<T> x = {one + std::ldexp(one, -10), T(3) * std::ldexp(one, -12), T(0.5),
                            std::ldexp(one, -8), one + std::ldexp(one, -20)};
  const auto out = run(x, 8);
  EXPECT_EQ(out.report.scale_exponent, 8);
  EXPECT_EQ(out.report.inexact_elements, 3u);
  EXPECT_EQ(out.report.max_bits_lost, 12);
  EXPECT_FALSE(out.report.overflow);
  EXPECT_BITS_EQ(out.sum.value, T(2.5) + std::ldexp(one, -8));  // (256 + 0 + 128 + 1 + 256) / 256
  EXPECT_EQ(out.sum.extra_error_bound, 3 * std::ldexp(1.0, -9));
  EXPECT_EQ(out.sum.diagnostics,
            "scale 2^-8 (caller); 3 elements lost low bits (at most 12); no overflow");
  // An element far below the grid vanishes: all its significand bits are lost.
  const auto gone = run(std::vector<T>{std::ldexp(T(1), -40) * T(1.5)}, 10);
  EXPECT_EQ(gone.report.max_bits_lost, 2);
  EXPECT_BITS_EQ(gone.sum.value, T(0));
  // Ties on the grid round to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0.
  const auto ties = run(std::vector<T>{T(0.5), T(1.5), T(2.5), T(-0.5)}, 0);
  EXPECT_BITS_EQ(ties.sum.value, T(4));
  EXPECT_EQ(ties.report.max_bits_lost, 1);
}

TYPED_TEST(FixedPointSum, SpecialsAndZeros) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  auto value = [](std::vector<T> x) { return run(x).sum.value; };
  EXPECT_BITS_EQ(value({T(1), nan}), nan);
  EXPECT_BITS_EQ(value({inf, T(1)}), inf);
  EXPECT_BITS_EQ(value({-inf, T(2)}), -inf);
  EXPECT_BITS_EQ(value({inf, -inf}), nan);
  EXPECT_BITS_EQ(value({}), T(0));
  EXPECT_BITS_EQ(value({-T(0)}), -T(0));
  EXPECT_BITS_EQ(value({-T(0), T(0)}), T(0));
  EXPECT_BITS_EQ(value({T(1), T(-1)}), T(0));
  const auto out = run(std::vector<T>{T(1), nan, inf});
  EXPECT_EQ(out.report.specials.nan, 1u);
  EXPECT_EQ(out.report.specials.pos_inf, 1u);
  EXPECT_NE(out.sum.diagnostics.find("1 NaN"), std::string::npos) << out.sum.diagnostics;
  // Specials do not disturb the scale derived from the finite inputs.
  EXPECT_EQ(out.report.scale_exponent, 61);
}

TYPED_TEST(FixedPointSum, PlainApiMatchesReport) {
  using T = TypeParam;
  std::mt19937_64 g(4);
  const std::vector<T> x = lognormal_signed<T>(g, 300, T(3));
  const auto full = run(x, 20);
  const auto plain = sumlab::fixed_point_sum<T>(std::span<const T>(x), 20);
  EXPECT_BITS_EQ(plain.value, full.sum.value);
  EXPECT_EQ(plain.extra_error_bound, full.sum.extra_error_bound);
  EXPECT_EQ(plain.diagnostics, full.sum.diagnostics);
}

}  // namespace
