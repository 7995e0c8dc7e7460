// Kahan and Neumaier: hand-made inputs where the compensation is visible, and the classic case
// that separates them (an addend larger than the running sum).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/kahan_sum.hpp"
#include "core/neumaier_sum.hpp"
#include "core/order_model/reduce_ops.hpp"
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

// gpu_double_word's bound rests on one theorem: each AccurateDWPlusDW has relative error at most
// 3u^2 + 13u^3 (Joldes, Muller, Popescu 2017). Probed where it is tight: random normalised pairs of
// every relative exponent and sign, heavy cancellation included, against the exact sum.
TYPED_TEST(CompensatedSum, DoubleWordAddStaysWithinItsTheorem) {
  using T = TypeParam;
  using Op = DoubleWordOp<T>;
  const T u = std::ldexp(T(1), -FloatTraits<T>::precision);
  const double theorem = 3.0 * double(u) * double(u) + 13.0 * double(u) * double(u) * double(u);
  std::mt19937_64 rng(20261201);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> shift(-3 * FloatTraits<T>::precision, 3 * FloatTraits<T>::precision);
  auto pair = [&](int e) {
    const T hi = static_cast<T>(std::ldexp(unit(rng), e));
    const T lo = static_cast<T>(double(hi) * unit(rng) * double(u));
    const TwoSumOut<T> n = fast_two_sum(hi, lo);
    return DoubleWord<T>{n.s, n.e};
  };
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    DoubleWord<T> a = pair(0), b = pair(shift(rng));
    if (i % 4 == 0) b = DoubleWord<T>{static_cast<T>(-a.hi), static_cast<T>(unit(rng) * double(a.lo))};  // cancel
    const DoubleWord<T> z = Op::combine(a, b);
    const std::vector<T> exact_terms{a.hi, a.lo, b.hi, b.lo};
    const std::vector<T> error_terms{z.hi, z.lo, static_cast<T>(-a.hi), static_cast<T>(-a.lo), static_cast<T>(-b.hi),
                                     static_cast<T>(-b.lo)};
    const double s = std::fabs(double(exact_sum<T>(exact_terms)));
    const double e = std::fabs(double(exact_sum<T>(error_terms)));
    if (s == 0) {
      EXPECT_EQ(e, 0.0);
      continue;
    }
    // Both exact values rounded once to T: the ratio carries at most a (1+u)^2 factor of slack.
    worst = std::max(worst, e / s);
    ASSERT_LE(e, theorem * s * (1 + 3.0 * double(u))) << i;
  }
  EXPECT_GT(worst, 0.5 * double(u) * double(u));  // the probe reached the u^2 regime
  // Unlike a plain add, the pair keeps what one float cannot: 1 + 2^-(p+10) - 1.
  const T tiny = std::ldexp(T(1), -FloatTraits<T>::precision - 10);
  DoubleWord<T> acc = Op::identity();
  for (T x : {T(1), tiny, T(-1)}) acc = Op::add(acc, x);
  EXPECT_EQ(Op::finish(acc), tiny);
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
