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
}

TEST(GrowthFit, StudentQuantiles) {
  EXPECT_NEAR(student_t_975(1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_975(10), 2.228, 1e-3);
  EXPECT_NEAR(student_t_975(60), 2.000, 2e-3);
  EXPECT_NEAR(student_t_975(100000), 1.960, 1e-3);
}

}  // namespace
}  // namespace sumlab
