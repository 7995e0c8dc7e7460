// Serial summation: the order is a single left-to-right chain, so small hand-made inputs have
// hand-derived answers.
#include "core/serial_sum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/float_traits.hpp"

namespace sumlab {
namespace {

template <class T> class SerialSum : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SerialSum, Types);

TYPED_TEST(SerialSum, EmptyIsPositiveZero) {
  const std::vector<TypeParam> x;
  const TypeParam s = serial_sum<TypeParam>(x);
  EXPECT_EQ(to_bits(s), to_bits(TypeParam(0)));
}

TYPED_TEST(SerialSum, NegativeZerosStayNegative) {
  const std::vector<TypeParam> x{TypeParam(-0.0), TypeParam(-0.0)};
  EXPECT_TRUE(std::signbit(serial_sum<TypeParam>(x)));
}

TYPED_TEST(SerialSum, OrderIsLeftToRight) {
  using T = TypeParam;
  // 1 + u + u: left to right each u is lost at a tie (rounds to even 1); the other order keeps them.
  const T one = 1, h = std::ldexp(T(1), -FloatTraits<T>::precision);
  const std::vector<T> a{one, h, h}, b{h, h, one};
  EXPECT_EQ(serial_sum<T>(a), one);
  EXPECT_EQ(serial_sum<T>(b), one + 2 * h);
}

TYPED_TEST(SerialSum, AwkwardSizesOfOnesAreExact) {
  using T = TypeParam;
  for (std::size_t n : {1u, 31u, 32u, 33u, 255u, 256u, 257u, 1000u}) {
    const std::vector<T> x(n, T(1));
    EXPECT_EQ(serial_sum<T>(x), static_cast<T>(n)) << n;
  }
}

TEST(SerialSumWide, FloatInDoubleKeepsWhatFloatLoses) {
  std::vector<float> x{16777216.0f};
  for (int i = 0; i < 1000; ++i) x.push_back(1.0f);
  EXPECT_EQ(serial_sum<float>(x), 16777216.0f);                  // every +1 is lost at 2^24
  EXPECT_EQ((serial_sum<float, double>(x)), 16778216.0f);        // exact in double
}

}  // namespace
}  // namespace sumlab
