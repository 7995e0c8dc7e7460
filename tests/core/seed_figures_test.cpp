// The textbook figures of the seeds, as tests: what the lab exists to show.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/exact_sum.hpp"
#include "core/generators.hpp"
#include "core/pairwise_sum.hpp"
#include "core/serial_sum.hpp"
#include "core/float_traits.hpp"
#include "reference/mpfr_sum.hpp"

namespace sumlab {
namespace {

// Ten million copies of 0.1f: serial gives 1,087,937; the textbook tree 1,000,000 (the exact sum
// of 10^7 * fl(0.1) = 1000000.0149..., correctly rounded to 1,000,000).
TEST(SeedFigures, TenMillionTenthsSerial) {
  const std::vector<float> x(10'000'000, 0.1f);
  EXPECT_EQ(serial_sum<float>(x), 1087937.0f);
}

TEST(SeedFigures, TenMillionTenthsPairwise) {
  const std::vector<float> x(10'000'000, 0.1f);
  const float tree = pairwise_sum<float>(x);
  EXPECT_EQ(tree, 1000000.0f);
  EXPECT_EQ(tree, reference::correctly_rounded_sum<float>(x));
  // With serial runs of <= 128 elements at the leaves, the same input is no longer exact: the
  // leaves' own rounding shows (the 999,999.375).
  EXPECT_EQ(pairwise_sum<float>(x, 128), 999999.375f);
}

// 2^26 uniform [0,1) floats: the loop stalls at 2^24, where the float spacing is 2 and every
// addend below 1 rounds away; the tree agrees with the exact sum to within one ulp.
TEST(SeedFigures, SerialStallsAtTwoToTheTwentyFour) {
  DistributionSpec spec;
  spec.kind = Distribution::uniform;
  const std::vector<float> x = generate<float>(spec, 1, std::size_t{1} << 26);
  EXPECT_EQ(serial_sum<float>(x), 16777216.0f);
  const float tree = pairwise_sum<float>(x), exact = exact_sum<float>(x);
  EXPECT_LE(std::fabs(tree - exact), ulp(exact));
  EXPECT_LT(std::fabs(exact - 33554432.0f) / 33554432.0f, 1e-3);  // about n/2
}

// A bfloat16 accumulator (8-bit significand) stops growing at about 256 times the addend.
TEST(SeedFigures, Bfloat16AccumulatorStalls) {
  const auto* bf16 = find_cpu_algorithm<float>("serial_bf16");
  ASSERT_NE(bf16, nullptr);
  const std::vector<float> ones(10'000, 1.0f);
  EXPECT_EQ(bf16->sum(ones).value, 256.0f);  // 256 + 1 is a tie in bf16 and rounds to even 256
  const std::vector<float> tenths(10'000, 0.1f);
  const float stalled = bf16->sum(tenths).value;
  EXPECT_GE(stalled / 0.1f, 128.0f);
  EXPECT_LE(stalled / 0.1f, 512.0f);
}

}  // namespace
}  // namespace sumlab
