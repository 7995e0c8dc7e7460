// NumPy's blocked pairwise sum: the 8-accumulator block and the split at multiples of 8 give
// hand-derivable results; the depth function bounds the chain it describes.
#include "core/numpy_pairwise_sum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/float_traits.hpp"
#include "core/serial_sum.hpp"

namespace sumlab {
namespace {

template <class T> class NumpyPairwise : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(NumpyPairwise, Types);

TYPED_TEST(NumpyPairwise, SmallInputsAreSerial) {
  using T = TypeParam;
  const T h = std::ldexp(T(1), -FloatTraits<T>::precision);
  const std::vector<T> x{T(1), h, h, h, h, h, h};  // n = 7 < 8: serial, every h lost
  EXPECT_EQ(numpy_pairwise_sum<T>(x), T(1));
}

TYPED_TEST(NumpyPairwise, EightStridedAccumulators) {
  using T = TypeParam;
  const T h = std::ldexp(T(1), -FloatTraits<T>::precision);
  // n = 16: r0 = 1 + h (tie -> 1), r1..r7 = h + h = 2h exact; combine:
  // ((1 + 2h) + 4h) + (4h + 4h) = 1 + 14h? (1 + 2h) is exact, (1+2h)+(4h) = 1 + 6h exact, + 8h
  // = 1 + 14h exact in both formats.
  std::vector<T> x(16, h);
  x[0] = T(1);
  EXPECT_EQ(numpy_pairwise_sum<T>(x), T(1) + 14 * h);
  EXPECT_EQ(serial_sum<T>(x), T(1));
}

TEST(NumpyPairwiseDepth, SmallAndBlocked) {
  EXPECT_EQ(numpy_pairwise_depth(1), 0u);
  EXPECT_EQ(numpy_pairwise_depth(7), 6u);
  EXPECT_EQ(numpy_pairwise_depth(8), 3u);    // r[j] = x[j]; 3 combine levels
  EXPECT_EQ(numpy_pairwise_depth(16), 4u);
  EXPECT_EQ(numpy_pairwise_depth(128), 18u); // 15 + 3
  EXPECT_EQ(numpy_pairwise_depth(129), 1u + numpy_pairwise_depth(65));
}

}  // namespace
}  // namespace sumlab
