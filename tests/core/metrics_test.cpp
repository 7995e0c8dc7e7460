// core/metrics: correct bits, ulp distances through the ordered integer image of IEEE values,
// and the condition number, on known values.
#include "core/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace {

using sumlab::condition_number;
using sumlab::correct_bits;
using sumlab::ordered_index;
using sumlab::signed_ulp_distance;
using sumlab::ulp_distance;

TEST(CorrectBits, KnownValues) {
  EXPECT_EQ(correct_bits(0.0, 24), 24.0);
  EXPECT_EQ(correct_bits(std::ldexp(1.0, -10), 24), 10.0);
  // p means exact: an inexact result is capped just below p (it was min(p, -log2), which gave a
  // result 1 ulp from the correctly rounded sum the exact result's p).
  EXPECT_EQ(correct_bits(std::ldexp(1.0, -30), 24), std::nextafter(24.0, 0.0));
  EXPECT_LT(correct_bits(std::ldexp(1.0, -24), 24), 24.0);
  EXPECT_LT(correct_bits(std::ldexp(1.0, -24) * (1 - std::ldexp(1.0, -24)), 24), 24.0);
  EXPECT_LT(correct_bits(std::numeric_limits<double>::denorm_min(), 53), 53.0);
  EXPECT_EQ(correct_bits(std::ldexp(1.0, -23), 24), 23.0);  // below p: -log2 as it is
  EXPECT_EQ(correct_bits(std::ldexp(1.0, -30), 53), 30.0);
  EXPECT_EQ(correct_bits(1.0, 53), 0.0);
  EXPECT_EQ(correct_bits(1e10, 53), 0.0);  // clamped at 0
  EXPECT_EQ(correct_bits(std::numeric_limits<double>::infinity(), 53), 0.0);
  EXPECT_TRUE(std::isnan(correct_bits(std::numeric_limits<double>::quiet_NaN(), 53)));
  EXPECT_NEAR(correct_bits(1e-6, 53), 6 * std::log2(10.0), 1e-12);
}

TEST(UlpDistance, KnownValuesFloat) {
  const float s = std::numeric_limits<float>::denorm_min();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 0u);
  EXPECT_EQ(ulp_distance(1.0f, 1.0f), 0u);
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1u);
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 0.0f)), 1u);
  EXPECT_EQ(ulp_distance(-s, s), 2u);
  EXPECT_EQ(ulp_distance(0.0f, s), 1u);
  EXPECT_EQ(ulp_distance(std::numeric_limits<float>::max(), inf), 1u);
  EXPECT_EQ(ulp_distance(1.0f, 2.0f), 1u << 23);            // one binade
  EXPECT_EQ(ulp_distance(-inf, inf), 2u * 0x7f800000u);
  EXPECT_EQ(ulp_distance(std::numeric_limits<float>::quiet_NaN(), 1.0f),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(signed_ulp_distance(std::nextafter(1.0f, 2.0f), 1.0f), 1);
  EXPECT_EQ(signed_ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), -1);
  EXPECT_EQ(signed_ulp_distance(-s, s), -2);
}

TEST(UlpDistance, KnownValuesDouble) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ulp_distance(1.0, 2.0), std::uint64_t(1) << 52);
  EXPECT_EQ(ulp_distance(-inf, inf), 2 * std::uint64_t(0x7ff0000000000000));  // no overflow
  EXPECT_EQ(signed_ulp_distance(inf, -inf), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(signed_ulp_distance(-inf, inf), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(signed_ulp_distance(1.0, 1.0 + std::ldexp(1.0, -50)), -4);
}

TEST(UlpDistance, OrderedIndexIsMonotone) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const double a = std::bit_cast<double>(rng()), b = std::bit_cast<double>(rng());
    if (std::isnan(a) || std::isnan(b)) continue;
    if (a < b) {
      EXPECT_LT(ordered_index(a), ordered_index(b));
    } else if (a == b) {
      EXPECT_EQ(ordered_index(a), ordered_index(b));
    }
    const float fa = std::bit_cast<float>(std::uint32_t(rng()));
    const float fb = std::nextafter(fa, std::numeric_limits<float>::infinity());
    if (!std::isnan(fa) && fa != fb) {
      EXPECT_EQ(ulp_distance(fa, fb), 1u);
    }
  }
}

TEST(ConditionNumber, KnownValues) {
  EXPECT_EQ(condition_number(3.0, 3.0), 1.0);
  EXPECT_EQ(condition_number(3.0, -1.5), 2.0);
  EXPECT_EQ(condition_number(2.0, 0.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(condition_number(0.0, 0.0), 1.0);
  EXPECT_TRUE(std::isnan(condition_number(std::numeric_limits<double>::quiet_NaN(), 1.0)));
}

}  // namespace
