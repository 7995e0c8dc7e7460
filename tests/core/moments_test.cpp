// Mean and variance: the textbook formula fails where the seeds say it does; two-pass and
// Welford stay close to the exact MPFR variance; Chan's merge is associative to rounding.
#include "tests/core/serial_moments.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/generators.hpp"
#include "reference/exact_moments.hpp"

namespace sumlab {
namespace {

// 1024 rows of 4096 floats, each offset 1e4 plus N(0, 1) noise: E[x^2] ~ 1e8 where float spacing
// is 8, so the textbook formula returns noise of size ~8 around a true variance of 1.
TEST(Moments, TextbookVarianceGoesNegativeAtOffset1e4) {
  constexpr int rows = 1024, cols = 4096;
  int negative = 0, welford_bad = 0, two_pass_bad = 0;
  double worst_welford = 0, worst_two_pass = 0;
  std::vector<double> welford_errors;
  for (int r = 0; r < rows; ++r) {
    DistributionSpec spec;
    spec.kind = Distribution::normal;
    spec.mu = 1e4;
    spec.sigma = 1;
    const std::vector<float> x = generate<float>(spec, static_cast<std::uint64_t>(r + 1), cols);
    const double exact = reference::exact_variance<float>(x);
    if (textbook_moments<float>(x).variance() < 0) ++negative;
    const double ew = std::fabs(welford_moments<float>(x).variance() - exact) / exact;
    const double et = std::fabs(two_pass_moments<float>(x).variance() - exact) / exact;
    worst_welford = std::max(worst_welford, ew);
    welford_errors.push_back(ew);
    worst_two_pass = std::max(worst_two_pass, et);
    welford_bad += ew > 1e-3;
    two_pass_bad += et > 1e-3;
  }
  // A published run saw 357 of 1024; the exact count depends on the noise, "a large share" is the claim.
  EXPECT_GT(negative, 200) << "rows with negative textbook variance";
  // Welford in float: the running mean (~1e4, spacing 2^-10) is rounded at every update, and its
  // random walk (~sqrt(n) * 2^-11 after n steps) adds n * delta^2 to M2: a relative error of a few
  // 1e-4, with tails just past 1e-3 (measured: 2 of 1024 rows at 1.06e-3 with these seeds).
  std::sort(welford_errors.begin(), welford_errors.end());
  EXPECT_LT(welford_errors[welford_errors.size() / 2], 1e-3) << "median";
  EXPECT_LE(welford_bad, 1024 / 100) << "worst " << worst_welford;
  EXPECT_LT(worst_welford, 2e-3);
  EXPECT_EQ(two_pass_bad, 0) << "worst " << worst_two_pass;
  RecordProperty("textbook_negative_rows", negative);
}

template <class T> class ChanMerge : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ChanMerge, Types);

TYPED_TEST(ChanMerge, MergeOfHalvesMatchesWholeAndIsAssociativeToRounding) {
  using T = TypeParam;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> nd(3.0, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<T> a(1 + rng() % 50), b(1 + rng() % 50), c(1 + rng() % 50);
    for (auto* v : {&a, &b, &c})
      for (auto& e : *v) e = static_cast<T>(nd(rng));
    const auto ma = welford_moments<T>(a), mb = welford_moments<T>(b), mc = welford_moments<T>(c);
    const auto left = chan_merge(chan_merge(ma, mb), mc), right = chan_merge(ma, chan_merge(mb, mc));
    const double u = std::ldexp(1.0, -std::numeric_limits<T>::digits);
    const double tol = 64 * u * static_cast<double>(a.size() + b.size() + c.size());
    EXPECT_EQ(left.count, right.count);
    EXPECT_NEAR(left.mean, right.mean, tol * (std::fabs(left.mean) + 2));
    EXPECT_NEAR(left.m2, right.m2, tol * left.m2);
  }
  const MomentSummary<T> empty;
  const auto one = welford_moments<T>(std::vector<T>{T(5)});
  EXPECT_EQ(chan_merge(empty, one).mean, T(5));
  EXPECT_EQ(chan_merge(one, empty).m2, T(0));
}

}  // namespace
}  // namespace sumlab
