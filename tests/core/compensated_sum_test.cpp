// Kahan and Neumaier: hand-made inputs where the compensation is visible, and the classic case
// that separates them (an addend larger than the running sum).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/float_traits.hpp"
#include "core/kahan_sum.hpp"
#include "core/neumaier_sum.hpp"
#include "core/serial_sum.hpp"

namespace sumlab {
namespace {

template <class T> class CompensatedSum : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CompensatedSum, Types);

TYPED_TEST(CompensatedSum, RecoversAdditionsSerialLoses) {
  using T = TypeParam;
  const T h = std::ldexp(T(1), -FloatTraits<T>::precision);
  std::vector<T> x{T(1)};
  for (int i = 0; i < 1000; ++i) x.push_back(h);  // each lost at a tie by the serial loop
  EXPECT_EQ(serial_sum<T>(x), T(1));
  EXPECT_EQ(kahan_sum<T>(x), T(1) + 1000 * h);
  EXPECT_EQ(neumaier_sum<T>(x), T(1) + 1000 * h);
}

TYPED_TEST(CompensatedSum, NeumaierHandlesLargeAddendKahanDoesNot) {
  using T = TypeParam;
  // [1, 2^p, 1, -2^p]: exact sum 2. Kahan loses the first 1 when the big term arrives.
  const T big = std::ldexp(T(1), FloatTraits<T>::precision + 1);
  const std::vector<T> x{T(1), big, T(1), -big};
  EXPECT_EQ(neumaier_sum<T>(x), T(2));
  EXPECT_NE(kahan_sum<T>(x), T(2));
}

TYPED_TEST(CompensatedSum, SpecialsFollowIeeeWhereTheAlgorithmCan) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  EXPECT_EQ(neumaier_sum<T>(std::vector<T>{T(1), inf, T(2)}), inf);
  EXPECT_TRUE(std::isnan(neumaier_sum<T>(std::vector<T>{inf, -inf})));
  // Kahan's correction computes inf - inf: documented NaN.
  EXPECT_TRUE(std::isnan(kahan_sum<T>(std::vector<T>{T(1), inf, T(2)})));
  EXPECT_EQ(to_bits(kahan_sum<T>(std::vector<T>{})), to_bits(T(0)));
  EXPECT_TRUE(std::signbit(kahan_sum<T>(std::vector<T>{T(-0.0), T(-0.0)})));
}

}  // namespace
}  // namespace sumlab
