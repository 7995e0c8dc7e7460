// Exact prefix sums and the MPFR linear recurrence (reference/prefix_sums.hpp,
// reference/linear_recurrence.hpp) against hand-computed cases.
#include "reference/prefix_sums.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/scan/scan_ops.hpp"
#include "reference/linear_recurrence.hpp"
#include "reference/mpfr_sum.hpp"

namespace sumlab::reference {
namespace {

template <class T> bool same(T a, T b) { return scan::same_bits(a, b); }

TEST(ExactPrefixSums, EachPrefixRoundedOnce) {
  // 1 + 2^-30 rounds to 1 in float, but the exact running sum keeps 2^-30: after -1 the prefix is
  // 2^-30 exactly (a serial float scan says 0).
  const std::vector<float> x{1.0f, 0x1p-30f, -1.0f, 3.0f};
  const auto p = exact_prefix_sums<float>(std::span<const float>(x));
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_EQ(p[1], 1.0f);
  EXPECT_EQ(p[2], 0x1p-30f);
  EXPECT_EQ(p[3], 3.0f + 0x1p-30f);  // rounds to 3
  const auto e = exact_prefix_sums<float>(std::span<const float>(x), false);
  EXPECT_TRUE(same(e[0], 0.0f));
  for (std::size_t i = 1; i < 4; ++i) EXPECT_TRUE(same(e[i], p[i - 1]));
  // Ties to even: 1 + 2^-53 (exact) then + 2^-105 (tips above the tie) in double.
  const std::vector<double> y{1.0, 0x1p-53, 0x1p-105};
  const auto q = exact_prefix_sums<double>(std::span<const double>(y));
  EXPECT_EQ(q[1], 1.0);                 // the exact tie rounds to even
  EXPECT_EQ(q[2], 1.0 + 0x1p-52);       // just above the tie rounds up
}

TEST(ExactPrefixSums, AgreesWithTheCorrectlyRoundedSumAtEveryPrefix) {
  std::vector<double> x(300);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp((i % 2 ? -1.0 : 1.0) * (1.0 + double(i)), int(i % 97) - 48);
  const auto p = exact_prefix_sums<double>(std::span<const double>(x));
  for (std::size_t i = 0; i < x.size(); i += 13)
    EXPECT_TRUE(same(p[i], correctly_rounded_sum<double>(std::span<const double>(x.data(), i + 1)))) << i;
}

TEST(ExactPrefixSums, Specials) {
  const float inf = std::numeric_limits<float>::infinity(), mx = std::numeric_limits<float>::max();
  const std::vector<float> a{-0.0f, -0.0f, 0.0f, inf, 1.0f, -inf};
  const auto p = exact_prefix_sums<float>(std::span<const float>(a));
  EXPECT_TRUE(same(p[0], -0.0f));
  EXPECT_TRUE(same(p[1], -0.0f));
  EXPECT_TRUE(same(p[2], 0.0f));
  EXPECT_EQ(p[3], inf);
  EXPECT_EQ(p[4], inf);
  EXPECT_TRUE(std::isnan(p[5]));
  const std::vector<float> o{mx, mx, -mx};
  const auto q = exact_prefix_sums<float>(std::span<const float>(o));
  EXPECT_EQ(q[1], inf);  // 2 max is beyond the range
  EXPECT_EQ(q[2], mx);   // the exact sum comes back in range: no sticky overflow
  EXPECT_TRUE(exact_prefix_sums<double>(std::span<const double>()).empty());
}

TEST(ExactSegmentedPrefixSums, RestartAtHeads) {
  const std::vector<double> x{1, 2, 3, 4, 5, 0x1p-60, -5};
  const std::vector<std::uint8_t> h{0, 0, 1, 0, 1, 0, 0};
  const auto p = exact_segmented_prefix_sums<double>(std::span<const double>(x), std::span<const std::uint8_t>(h));
  const std::vector<double> want{1, 3, 3, 7, 5, 5, 0x1p-60};
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(p[i], want[i]) << i;
  const auto e =
      exact_segmented_prefix_sums<double>(std::span<const double>(x), std::span<const std::uint8_t>(h), false);
  EXPECT_EQ(e[0], 0.0);
  EXPECT_EQ(e[2], 3.0);  // the previous segment's total, as the operator's exclusive scan carries
  const std::vector<std::uint8_t> bad{0};
  EXPECT_THROW(exact_segmented_prefix_sums<double>(std::span<const double>(x), std::span<const std::uint8_t>(bad)),
               std::invalid_argument);
}

TEST(ExactLinearRecurrence, HandCases) {
  // a = 1/2, b = 1: h_t = 2 - 2^-t exactly.
  std::vector<double> a(80, 0.5), b(80, 1.0);
  const auto r = exact_linear_recurrence<double>(std::span<const double>(a), std::span<const double>(b));
  for (int t = 0; t < 80; ++t) {
    const double hi = r.hi[std::size_t(t)], lo = r.lo[std::size_t(t)];
    // 2 - 2^-t needs t+2 bits: beyond 53 the tail is in lo.
    EXPECT_EQ(hi + lo, hi);
    EXPECT_EQ(recurrence_relative_error(2.0 - std::ldexp(1.0, -t), hi, lo) == 0.0 || t > 52, true) << t;
  }
  EXPECT_EQ(r.hi[79], 2.0);
  EXPECT_EQ(r.lo[79], -std::ldexp(1.0, -79));
  // a = 1: the plain prefix sum of b; a = 3: geometric growth 3^t.
  std::vector<float> one(30, 1.0f), three(30, 3.0f), bs(30, 1.0f);
  const auto s = exact_linear_recurrence<float>(std::span<const float>(one), std::span<const float>(bs));
  EXPECT_EQ(s.hi[29], 30.0);
  const auto g = exact_linear_recurrence<float>(std::span<const float>(three), std::span<const float>(bs));
  EXPECT_EQ(g.hi[29], (std::pow(3.0, 30) - 1) / 2);  // (3^30 - 1)/2 < 2^53: exact
  EXPECT_EQ(recurrence_relative_error(1.5, 1.0, 0.0), 0.5);
  EXPECT_EQ(recurrence_relative_error(0.0, 0.0, 0.0), 0.0);
  EXPECT_TRUE(std::isinf(recurrence_relative_error(1.0, 0.0, 0.0)));
  EXPECT_THROW(exact_linear_recurrence<float>(std::span<const float>(one), std::span<const float>(bs.data(), 3)),
               std::invalid_argument);
}

}  // namespace
}  // namespace sumlab::reference
