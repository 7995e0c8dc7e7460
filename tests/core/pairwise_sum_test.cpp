// Pairwise summation: the split point and the base case decide the tree, so small inputs have
// hand-derived answers, and the depth function is checked against the tree it describes.
#include "core/pairwise_sum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/float_traits.hpp"

namespace sumlab {
namespace {

template <class T> class PairwiseSum : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PairwiseSum, Types);

TYPED_TEST(PairwiseSum, TreeShapeIsSplitAtHalf) {
  using T = TypeParam;
  const T one = 1, h = std::ldexp(T(1), -FloatTraits<T>::precision);
  // n = 4: (1 + h) + (h + h) -> the left pair rounds to 1 (tie to even), then 1 + 2h is exact.
  const std::vector<T> x{one, h, h, h};
  EXPECT_EQ(pairwise_sum<T>(x), one + 2 * h);
  // n = 3: x[0] + (x[1] + x[2]) = 1 + 2h (exact); serial would give 1.
  const std::vector<T> y{one, h, h};
  EXPECT_EQ(pairwise_sum<T>(y), one + 2 * h);
  // With a base case of 3 the same input is one serial run: ((1 + h) + h) = 1.
  EXPECT_EQ(pairwise_sum<T>(y, 3), one);
}

TYPED_TEST(PairwiseSum, EmptyAndSingle) {
  using T = TypeParam;
  EXPECT_EQ(to_bits(pairwise_sum<T>(std::vector<T>{})), to_bits(T(0)));
  EXPECT_EQ(pairwise_sum<T>(std::vector<T>{T(3.5)}), T(3.5));
  EXPECT_TRUE(std::signbit(pairwise_sum<T>(std::vector<T>{T(-0.0)})));
}

TEST(PairwiseDepth, MatchesCeilLog2ForTextbookTree) {
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 31u, 32u, 33u, 1000u, 1u << 20, (1u << 20) + 1}) {
    const auto expect = n <= 1 ? 0u : static_cast<std::size_t>(std::ceil(std::log2(static_cast<double>(n))));
    EXPECT_EQ(pairwise_depth(n), expect) << n;
  }
  // Base 128: a run of 128 is 127 serial additions, then the halving levels above it.
  EXPECT_EQ(pairwise_depth(128, 128), 127u);
  EXPECT_EQ(pairwise_depth(256, 128), 128u);
  EXPECT_EQ(pairwise_depth(257, 128), 128u);  // 257 -> 128 | 129; the 128-run dominates
}

}  // namespace
}  // namespace sumlab
