// The growth fit recovers a known exponent from synthetic data, with a confidence interval that
// covers it, and refuses to fit what carries no slope.
#include "core/growth_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace sumlab {
namespace {

TEST(GrowthFit, ExactPowerLawGivesItsExponent) {
  std::vector<double> n, e;
  for (int k = 4; k <= 24; ++k) {
    n.push_back(std::ldexp(1.0, k));
    e.push_back(3e-8 * std::pow(n.back(), 0.5));
  }
  const GrowthFit f = fit_growth(n, e);
  ASSERT_TRUE(f.ok);
  EXPECT_NEAR(f.exponent, 0.5, 1e-12);
  EXPECT_NEAR(f.r_squared, 1.0, 1e-12);
  EXPECT_EQ(f.points, 21);
}

TEST(GrowthFit, NoisyDataCoverageOfTheConfidenceInterval) {
  // log2 error = a + b log2 n + N(0, 0.3): the 95% interval should cover b in about 95% of trials.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 0.3);
  int covered = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> n, e;
    for (int k = 4; k <= 20; ++k) {
      n.push_back(std::ldexp(1.0, k));
      e.push_back(std::exp2(-20.0 + 1.0 * k + noise(rng)));
    }
    const GrowthFit f = fit_growth(n, e);
    ASSERT_TRUE(f.ok);
    covered += f.ci_low <= 1.0 && 1.0 <= f.ci_high;
  }
  // Binomial(400, 0.95): mean 380, sd 4.4; 6 sd either side.
  EXPECT_GE(covered, 353);
  EXPECT_LE(covered, 400);
}

TEST(GrowthFit, ZerosAndTooFewPointsAreNotFitted) {
  EXPECT_FALSE(fit_growth({16, 32, 64}, {0, 0, 0}).ok);           // exact results: no slope
  EXPECT_FALSE(fit_growth({16, 32}, {1e-8, 2e-8}).ok);            // two points: no interval
  EXPECT_FALSE(fit_growth({16, 16, 16}, {1e-8, 2e-8, 3e-8}).ok);  // one n: no slope
  const GrowthFit f = fit_growth({16, 32, 64, 128}, {1e-8, 0, 4e-8, 8e-8});
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.points, 3);
  EXPECT_EQ(f.distinct_n, 3);
}

TEST(GrowthFit, TwoDistinctSizesAreNoFit) {
  // Four points at two n: a line through two clusters, whatever their scatter; with the same value
  // at each n (a constant input, every seed alike) least squares gave R^2 = 1 and a zero-width interval.
  const GrowthFit f = fit_growth({16, 16, 64, 64}, {1e-8, 1e-8, 3e-8, 3e-8});
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.points, 4);
  EXPECT_EQ(f.distinct_n, 2);
}

TEST(GrowthOfMedians, FitsOneMedianPerSize) {
  // Three seeds at each n: errors c n^0.5 times (1, 1, 100): the median is c n^0.5, the outlier
  // moves nothing; zeros count among the seeds.
  std::vector<double> n, e;
  for (int k = 4; k <= 12; ++k) {
    const double size = std::ldexp(1.0, k), v = 1e-9 * std::sqrt(size);
    for (double m : {1.0, 100.0, 1.0}) {
      n.push_back(size);
      e.push_back(v * m);
    }
    n.push_back(size);
    e.push_back(NAN);  // a special input: counted, left out
  }
  const GrowthOfMedians g = fit_growth_of_medians(n, e);
  ASSERT_EQ(g.none_because, NoGrowthFit::fitted);
  ASSERT_TRUE(g.fit.ok);
  EXPECT_NEAR(g.fit.exponent, 0.5, 1e-12);
  EXPECT_EQ(g.fit.points, 9);  // one per n, not one per seed
  EXPECT_EQ(g.distinct_n, 9);
  EXPECT_EQ(g.measurements, 36);
  EXPECT_EQ(g.nonfinite_errors, 9);
  EXPECT_EQ(g.zero_errors, 0);
  EXPECT_EQ(*g.n_min, 16);
  EXPECT_EQ(*g.n_max, 4096);
}

TEST(GrowthOfMedians, SaysWhyThereIsNoFit) {
  // Exact at every n and seed.
  GrowthOfMedians g = fit_growth_of_medians({16, 16, 32, 32, 64, 64}, {0, 0, 0, 0, 0, 0});
  EXPECT_EQ(g.none_because, NoGrowthFit::all_zero);
  EXPECT_EQ(g.zero_errors, 6);
  EXPECT_FALSE(g.n_min.has_value());
  // A constant input: the same error at every seed, at two n only (the others exact): the pooled
  // fit of old gave b with R^2 = 1 and a zero-width interval from these.
  g = fit_growth_of_medians({16, 16, 64, 64, 256, 256, 1024, 1024}, {2e-8, 2e-8, 6e-8, 6e-8, 0, 0, 0, 0});
  EXPECT_EQ(g.none_because, NoGrowthFit::fewer_than_3_n);
  EXPECT_FALSE(g.fit.ok);
  EXPECT_EQ(g.distinct_n, 2);
  EXPECT_EQ(g.zero_errors, 4);
  EXPECT_EQ(*g.n_min, 16);
  EXPECT_EQ(*g.n_max, 64);
  // One size only.
  g = fit_growth_of_medians({256, 256, 256}, {1e-8, 2e-8, 3e-8});
  EXPECT_EQ(g.none_because, NoGrowthFit::fewer_than_3_n);
  EXPECT_EQ(g.distinct_n, 1);
  // A median of 0 (two of three seeds exact) leaves its n out of the fit.
  g = fit_growth_of_medians({16, 16, 16, 32, 64, 128}, {0, 0, 5e-8, 1e-8, 2e-8, 4e-8});
  ASSERT_EQ(g.none_because, NoGrowthFit::fitted);
  EXPECT_EQ(g.distinct_n, 3);
  EXPECT_EQ(*g.n_min, 32);
  EXPECT_NEAR(g.fit.exponent, 1.0, 1e-12);
  // Nothing finite.
  g = fit_growth_of_medians({16, 32, 64}, {NAN, INFINITY, NAN});
  EXPECT_EQ(g.none_because, NoGrowthFit::no_finite_error);
  EXPECT_EQ(g.nonfinite_errors, 3);
  EXPECT_EQ(to_string(NoGrowthFit::fewer_than_3_n), "fewer_than_3_n");
}

TEST(GrowthFit, StudentQuantiles) {
  EXPECT_NEAR(student_t_975(1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_975(10), 2.228, 1e-3);
  EXPECT_NEAR(student_t_975(60), 2.000, 2e-3);
  EXPECT_NEAR(student_t_975(100000), 1.960, 1e-3);
}

}  // namespace
}  // namespace sumlab
