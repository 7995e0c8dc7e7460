// core/exact_window: the exact sum's AVX2 block path, for float and double. Hand-derived block
// sums, which blocks it takes and where it stops (the exponent-spread edge at 63, zeros,
// subnormals, Inf/NaN, tiny blocks), and the superaccumulator's limbs with the path against the
// same inputs added one at a time (which never use it), bit for bit; the rounded sums against
// MPFR. Skips on a CPU without AVX2 (there the path is never taken).
#include "core/exact_window.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

#include "core/exact_sum.hpp"
#include "reference/mpfr_sum.hpp"

namespace {

using sumlab::Superaccumulator;
using sumlab::detail::exact_window_available;
using sumlab::detail::exact_window_block;
using sumlab::detail::exact_window_blocks;
using sumlab::detail::WindowSum;

constexpr std::size_t B = exact_window_block;

#define REQUIRE_WINDOW() \
  if (!exact_window_available()) GTEST_SKIP() << "this CPU has no AVX2: the window path is never taken"

template <class T> std::size_t blocks_taken(const std::vector<T>& x, std::vector<WindowSum>& out) {
  out.assign(x.size() / B + 1, WindowSum{});
  return exact_window_blocks(x.data(), x.size(), out.data(), out.size());
}

// The limbs of the span add (window path where it applies) and of one add per element (never).
template <class T> void expect_same_limbs(const std::vector<T>& x, const char* what) {
  SCOPED_TRACE(what);
  Superaccumulator<T> span_acc, one_acc;
  span_acc.add(std::span<const T>(x));
  for (const T v : x) one_acc.add(v);
  EXPECT_EQ(span_acc.limbs(), one_acc.limbs());
  EXPECT_EQ(span_acc.specials(), one_acc.specials());
  EXPECT_EQ(sumlab::hex_bits(span_acc.round()), sumlab::hex_bits(one_acc.round()));
}

// The one block of x, taken, has these columns.
template <class T>
void expect_block(const std::vector<T>& x, std::int64_t hi, std::int64_t mid, std::int64_t lo, int shift) {
  std::vector<WindowSum> out;
  ASSERT_EQ(blocks_taken(x, out), 1u);
  EXPECT_EQ(out[0].hi, hi);
  EXPECT_EQ(out[0].mid, mid);
  EXPECT_EQ(out[0].lo, lo);
  EXPECT_EQ(out[0].shift, shift);
}

TEST(ExactWindow, HandDerivedBlockSums) {
  REQUIRE_WINDOW();
  constexpr std::int64_t one = 1;
  // 1024 x 1.0: E = 1023, so s = 63 and each m = 2^52 splits into lo = 0, hi = 2^51; the block is
  // hi 2^64 2^(E - 64) = 2^61 2^64 2^959 units of 2^-1074 = 2^10.
  expect_block(std::vector<double>(B, 1.0), one << 61, 0, 0, 959);
  // 1024 x -1.0: each element is ~hi 2^64 + ~lo + 1 = (-2^51 - 1) 2^64 + (2^64 - 1) + 1, so the
  // columns are hi = -1024 (2^51 + 1), mid = 1024 (2^32 - 1), lo = 1024 (2^32 - 1) + 1024; their
  // value is -2^125 (units of 2^(959 - 1074)), -1024.
  expect_block(std::vector<double>(B, -1.0), -(one << 61) - 1024, 1024 * ((one << 32) - 1), one << 42, 959);
  // One element of 2^-63 (E - 63: s = 0, m = 2^52 stays in the low word, whose high half is 2^20)
  // among 1023 ones.
  std::vector<double> edge(B, 1.0);
  edge[517] = std::ldexp(1.0, -63);
  expect_block(edge, 1023 * (one << 51), one << 20, 0, 959);
  // Floats: the same columns, in units of 2^-149 = 2^925 2^-1074, so shift = 959 - 925.
  expect_block(std::vector<float>(B, 1.0f), one << 61, 0, 0, 34);
}

template <class T> class ExactWindowTyped : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ExactWindowTyped, Types);

TYPED_TEST(ExactWindowTyped, TakesBlocksWithinTheWindowAndStopsBeforeOthers) {
  using T = TypeParam;
  REQUIRE_WINDOW();
  std::vector<WindowSum> out;
  auto blocks_with = [](T special_value, std::size_t at) {
    std::vector<T> x(4 * B, T(0.75));
    x[at] = special_value;
    return x;
  };
  const T inf = std::numeric_limits<T>::infinity();
  // 0.75 has the (double) biased exponent 1022, 2^-64 959: a spread of 63, taken; 2^-65 (64) not.
  EXPECT_EQ(blocks_taken(blocks_with(std::ldexp(T(1), -64), 2 * B + 5), out), 4u);
  EXPECT_EQ(blocks_taken(blocks_with(std::ldexp(T(1), -65), 2 * B + 5), out), 2u);
  EXPECT_EQ(blocks_taken(blocks_with(-std::ldexp(T(1), -65), 3 * B - 1), out), 2u);
  // Zeros, subnormals, Inf and NaN stop the path at their block (a float subnormal is a normal
  // double, but 2^-149 is far outside the window of 0.75).
  EXPECT_EQ(blocks_taken(blocks_with(T(0), B), out), 1u);
  EXPECT_EQ(blocks_taken(blocks_with(-T(0), 0), out), 0u);
  EXPECT_EQ(blocks_taken(blocks_with(std::numeric_limits<T>::denorm_min(), 3 * B), out), 3u);
  EXPECT_EQ(blocks_taken(blocks_with(inf, 4 * B - 1), out), 3u);
  EXPECT_EQ(blocks_taken(blocks_with(-inf, 1), out), 0u);
  EXPECT_EQ(blocks_taken(blocks_with(std::numeric_limits<T>::quiet_NaN(), 2 * B), out), 2u);
  // The smallest block taken: largest |x| = 2^-959 for double (biased exponent 64), 2^-34 for
  // float (989 = 64 + 925); one binade lower it is not taken.
  const int lowest = std::is_same_v<T, double> ? -959 : -34;
  std::vector<T> tiny(B, std::ldexp(T(1), lowest - 1));
  EXPECT_EQ(blocks_taken(tiny, out), 0u);
  std::vector<T> low(B, std::ldexp(T(1), lowest));
  ASSERT_EQ(blocks_taken(low, out), 1u);
  EXPECT_EQ(out[0].shift, 0);
  // Fewer than a block left, and max_out.
  std::vector<T> short_x(B - 1, T(0.5));
  EXPECT_EQ(blocks_taken(short_x, out), 0u);
  std::vector<T> five(5 * B + 3, T(0.5));
  out.assign(8, WindowSum{});
  EXPECT_EQ(exact_window_blocks(five.data(), five.size(), out.data(), 2), 2u);
  EXPECT_EQ(exact_window_blocks(five.data(), five.size(), out.data(), 8), 5u);
}

TYPED_TEST(ExactWindowTyped, SuperaccumulatorLimbsEqualOneAddAtATime) {
  using T = TypeParam;
  REQUIRE_WINDOW();
  std::mt19937_64 g(20261130);
  auto uniform = [&g](std::size_t n, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<T> x(n);
    for (auto& v : x) v = static_cast<T>(d(g));
    return x;
  };
  const double top = std::is_same_v<T, double> ? 1e300 : 1e36;
  expect_same_limbs(uniform(37 * B + 11, 0.0, 1.0), "uniform [0, 1), a tail");
  expect_same_limbs(uniform(20 * B, -1.0, 1.0), "signed, whole blocks");
  expect_same_limbs(uniform(9 * B + 1000, -top, top), "near the top of the range");
  // Blocks the path cannot take between ones it takes, so both paths meet in one accumulator.
  auto mixed = uniform(16 * B + 77, -3.0, 5.0);
  mixed[3 * B + 7] = T(0);
  mixed[5 * B] = -T(0);
  mixed[6 * B + 9] = std::numeric_limits<T>::denorm_min();
  mixed[8 * B + 1] = std::ldexp(T(1), -80);  // a spread over 63
  mixed[9 * B + 2] = std::numeric_limits<T>::infinity();
  mixed[12 * B + 3] = std::numeric_limits<T>::min();
  expect_same_limbs(mixed, "blocks of both paths");
  // Every exponent, one binade a block (some below the smallest block taken, some subnormal).
  std::vector<T> ladder;
  const int emin = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;  // denorm_min = 2^emin
  const int emax = std::numeric_limits<T>::max_exponent - 1;
  for (int e = emin; e <= emax; e += std::is_same_v<T, double> ? 31 : 5)
    for (std::size_t i = 0; i < B; ++i)
      ladder.push_back(std::ldexp((i % 3 == 0 ? T(-1) : T(1)) * (T(1) + static_cast<T>(i) * T(0x1p-12)), e));
  expect_same_limbs(ladder, "a binade a block, the whole exponent range");
  // Sums that cancel to 0, and one that overflows.
  std::vector<T> cancel = uniform(8 * B, 0.0, 1.0);
  for (std::size_t i = 0; i < 4 * B; ++i) cancel[4 * B + i] = -cancel[i];
  expect_same_limbs(cancel, "exact cancellation");
  std::vector<T> big(4 * B, std::numeric_limits<T>::max());
  expect_same_limbs(big, "overflow to +Inf");
}

TYPED_TEST(ExactWindowTyped, ExactSumMatchesMpfr) {
  using T = TypeParam;
  REQUIRE_WINDOW();
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> d(0.0, 1.0);
    std::vector<T> x(25 * B + 333);
    for (auto& v : x) v = static_cast<T>(d(g) * std::exp2(std::floor(d(g) * 4)));
    EXPECT_EQ(sumlab::hex_bits(sumlab::exact_sum<T>(std::span<const T>(x))),
              sumlab::hex_bits(sumlab::reference::correctly_rounded_sum<T>(std::span<const T>(x))))
        << "seed " << seed;
  }
}

}  // namespace
