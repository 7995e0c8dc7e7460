// core/exact_sum: the superaccumulator against the MPFR reference, bit for bit: random
// distributions over many seeds, hand-made edge tables (signed zeros, ties, subnormals, overflow,
// specials), awkward sizes, a fuzzer over the whole exponent range, and the properties the GPU
// merge relies on (merge / add_limb / add_specials give the same bits; any order gives the same
// bits; chunk wrap-around and limb normalisation keep the sum exact).
#include "core/exact_sum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "core/float_traits.hpp"
#include "reference/mpfr_sum.hpp"

namespace {

using sumlab::exact_sum;
using sumlab::FloatTraits;
using sumlab::hex_bits;
using sumlab::SpecialCounts;
using sumlab::Superaccumulator;

template <class T> T reference_sum(const std::vector<T>& x) {
  return sumlab::reference::correctly_rounded_sum<T>(std::span<const T>(x));
}
template <class T> T exact(const std::vector<T>& x) { return exact_sum<T>(std::span<const T>(x)); }

// Bits, printed in hex on failure; NaN payloads are compared too (both sides use quiet_NaN).
#define EXPECT_BITS_EQ(a, b) EXPECT_EQ(hex_bits(a), hex_bits(b))

template <class T> void expect_matches_reference(const std::vector<T>& x, const char* what) {
  SCOPED_TRACE(what);
  SCOPED_TRACE("n = " + std::to_string(x.size()));
  EXPECT_BITS_EQ(exact(x), reference_sum(x));
}

template <class T> class ExactSum : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ExactSum, Types);

template <class T> struct C {
  static constexpr T max = std::numeric_limits<T>::max();
  static constexpr T inf = std::numeric_limits<T>::infinity();
  static constexpr T nan = std::numeric_limits<T>::quiet_NaN();
  static constexpr T min_normal = std::numeric_limits<T>::min();
  static constexpr T min_sub = std::numeric_limits<T>::denorm_min();
  static constexpr int p = FloatTraits<T>::precision;
  static T pow2(int e) { return std::ldexp(T(1), e); }
};

// --- generators (a local mt19937_64 per test, seeded explicitly) ---

template <class T> std::vector<T> uniform(std::mt19937_64& g, std::size_t n, T lo, T hi) {
  std::uniform_real_distribution<T> d(lo, hi);
  std::vector<T> x(n);
  for (auto& v : x) v = d(g);
  return x;
}
template <class T> std::vector<T> normal(std::mt19937_64& g, std::size_t n) {
  std::normal_distribution<T> d(T(0), T(1));
  std::vector<T> x(n);
  for (auto& v : x) v = d(g);
  return x;
}
template <class T> std::vector<T> lognormal_signed(std::mt19937_64& g, std::size_t n, T sigma) {
  std::lognormal_distribution<T> d(T(0), sigma);
  std::vector<T> x(n);
  for (auto& v : x) v = (g() & 1) ? d(g) : -d(g);
  return x;
}
// Pairs x, -x (exact cancellation) plus a little noise of much smaller magnitude, shuffled: the
// exact sum is tiny compared with the terms, the hardest case for any rounding scheme.
template <class T> std::vector<T> cancellation(std::mt19937_64& g, std::size_t n) {
  std::vector<T> x = lognormal_signed<T>(g, n / 2, T(3));
  const std::size_t half = x.size();
  for (std::size_t i = 0; i < half; ++i) x.push_back(-x[i]);
  std::uniform_real_distribution<T> small(T(-1e-6), T(1e-6));
  while (x.size() < n) x.push_back(small(g));
  std::shuffle(x.begin(), x.end(), g);
  return x;
}
// Any finite T: random sign, exponent field in [lo_field, hi_field], random fraction.
template <class T>
T random_finite(std::mt19937_64& g, int lo_field, int hi_field) {
  using Bits = typename FloatTraits<T>::Bits;
  constexpr int frac_bits = FloatTraits<T>::precision - 1;
  std::uniform_int_distribution<int> field(lo_field, hi_field);
  const Bits frac = static_cast<Bits>(g()) & ((Bits(1) << frac_bits) - 1);
  const Bits sign = static_cast<Bits>(g() & 1) << (sizeof(T) * 8 - 1);
  return sumlab::from_bits<T>(sign | (static_cast<Bits>(field(g)) << frac_bits) | frac);
}

// --- random distributions, many seeds, the sizes around a warp and beyond ---

TYPED_TEST(ExactSum, RandomDistributionsMatchReference) {
  using T = TypeParam;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 g(seed);
    for (std::size_t n : {1u, 2u, 3u, 7u, 31u, 32u, 33u, 100u, 1000u, 4097u}) {
      expect_matches_reference(uniform<T>(g, n, T(0), T(1)), "uniform [0,1)");
      expect_matches_reference(uniform<T>(g, n, T(-1), T(1)), "uniform [-1,1)");
      expect_matches_reference(normal<T>(g, n), "normal");
      expect_matches_reference(lognormal_signed<T>(g, n, T(2)), "lognormal sigma 2");
      expect_matches_reference(lognormal_signed<T>(g, n, T(10)), "lognormal sigma 10");
      expect_matches_reference(cancellation<T>(g, n), "cancellation");
    }
  }
}

TYPED_TEST(ExactSum, SizesMatchReference) {
  using T = TypeParam;
  std::mt19937_64 g(2024);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(31),
                        std::size_t(32), std::size_t(33), std::size_t(1000),
                        (std::size_t(1) << 20) + 1}) {
    expect_matches_reference(uniform<T>(g, n, T(-1), T(1)), "uniform");
    expect_matches_reference(cancellation<T>(g, n), "cancellation");
  }
}

// --- edge tables: each row is checked against the reference and against the known answer ---

template <class T> void expect_row(const std::vector<T>& x, T expected, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_BITS_EQ(exact(x), expected);
  EXPECT_BITS_EQ(reference_sum(x), expected);
}

TYPED_TEST(ExactSum, SignedZeros) {
  using T = TypeParam;
  expect_row<T>({}, T(0), "n = 0 -> +0");
  expect_row<T>({-T(0)}, -T(0), "[-0] -> -0");
  expect_row<T>({-T(0), -T(0)}, -T(0), "[-0, -0] -> -0");
  expect_row<T>({T(0), -T(0)}, T(0), "[+0, -0] -> +0");
  expect_row<T>({-T(0), T(0)}, T(0), "[-0, +0] -> +0");
  expect_row<T>({T(1), T(-1)}, T(0), "[1, -1] -> +0");
  expect_row<T>({T(-1), T(1)}, T(0), "[-1, 1] -> +0");
  expect_row<T>({-T(0), T(-1), T(1), -T(0)}, T(0), "[-0, -1, 1, -0] -> +0");
  expect_row<T>({-C<T>::min_sub, C<T>::min_sub}, T(0), "[-tiny, tiny] -> +0");
}

TYPED_TEST(ExactSum, TiesAndSticky) {
  using T = TypeParam;
  const int p = C<T>::p;
  const T one = T(1), half_ulp = C<T>::pow2(-p), sticky = C<T>::pow2(-p - 30);
  expect_row<T>({one, half_ulp}, one, "1 + half ulp: tie -> even (1)");
  expect_row<T>({one, half_ulp, sticky}, one + C<T>::pow2(1 - p), "tie + sticky -> up");
  expect_row<T>({one, half_ulp, -sticky}, one, "tie - sticky -> down");
  const T odd = one + C<T>::pow2(1 - p);
  expect_row<T>({odd, half_ulp}, one + C<T>::pow2(2 - p), "odd + half ulp: tie -> even (up)");
  expect_row<T>({-odd, -half_ulp}, -(one + C<T>::pow2(2 - p)), "negative tie -> even");
  // A sticky bit far below the tie, across the whole exponent range.
  expect_row<T>({one, half_ulp, C<T>::min_sub}, odd, "sticky = smallest subnormal");
  expect_row<T>({half_ulp, C<T>::min_sub, one}, odd, "same, other order");
}

TYPED_TEST(ExactSum, SubnormalsAndSubnormalResults) {
  using T = TypeParam;
  const T s = C<T>::min_sub, mn = C<T>::min_normal;
  const T max_sub = mn - s;
  expect_row<T>({s, s, s}, T(3) * s, "three smallest subnormals");
  expect_row<T>({max_sub, s}, mn, "largest subnormal + smallest = smallest normal");
  expect_row<T>({max_sub, max_sub}, max_sub + max_sub, "two largest subnormals (normal)");
  expect_row<T>({mn, -s}, max_sub, "normal - tiny -> subnormal");
  expect_row<T>({mn * T(1.5), -mn}, mn * T(0.5), "result half the smallest normal");
  expect_row<T>({T(1), mn * T(0.25), T(-1)}, mn * T(0.25), "cancellation to a subnormal");
  std::mt19937_64 g(7);
  for (int r = 0; r < 200; ++r) {
    std::vector<T> x(1 + g() % 50);
    for (auto& v : x) v = random_finite<T>(g, 0, 0);  // subnormals (and zeros) only
    expect_matches_reference(x, "subnormals only");
  }
}

TYPED_TEST(ExactSum, OverflowAndMax) {
  using T = TypeParam;
  const T mx = C<T>::max, inf = C<T>::inf;
  const T half_ulp_max = C<T>::pow2(std::numeric_limits<T>::max_exponent - 1 - C<T>::p);
  expect_row<T>({mx, mx}, inf, "max + max -> +Inf");
  expect_row<T>({-mx, -mx}, -inf, "-max - max -> -Inf");
  expect_row<T>({mx, -mx}, T(0), "max - max -> +0");
  expect_row<T>({mx, mx, -mx}, mx, "max + max - max -> max (no intermediate overflow)");
  expect_row<T>({mx, half_ulp_max}, inf, "max + ulp(max)/2: tie, max is odd -> Inf");
  expect_row<T>({-mx, -half_ulp_max}, -inf, "negative tie at max -> -Inf");
  expect_row<T>({mx, half_ulp_max, -C<T>::min_sub}, mx, "just under the tie -> max");
  expect_row<T>({mx, half_ulp_max / T(2)}, mx, "quarter ulp -> max");
  std::vector<T> many(1000, mx);
  for (int i = 0; i < 999; ++i) many.push_back(-mx);
  expect_row<T>(many, mx, "1000 max - 999 max");
}

TYPED_TEST(ExactSum, InfinitiesAndNaN) {
  using T = TypeParam;
  const T inf = C<T>::inf, nan = C<T>::nan, mx = C<T>::max;
  expect_row<T>({inf}, inf, "Inf");
  expect_row<T>({-inf}, -inf, "-Inf");
  expect_row<T>({inf, T(1), -mx, -mx}, inf, "Inf + finite overflowing negative -> Inf");
  expect_row<T>({inf, inf}, inf, "Inf + Inf");
  expect_row<T>({inf, -inf}, nan, "Inf - Inf -> NaN");
  expect_row<T>({T(1), nan}, nan, "NaN");
  expect_row<T>({inf, nan}, nan, "Inf + NaN -> NaN");
  expect_row<T>({-T(0), nan}, nan, "-0 + NaN -> NaN");
  expect_row<T>({mx, mx, -inf}, -inf, "overflowing finite part + -Inf -> -Inf");
}

TYPED_TEST(ExactSum, AlternatingHugeAndTiny) {
  using T = TypeParam;
  const T huge = sizeof(T) == 8 ? T(1e308) : T(1e38);
  const T tiny = sizeof(T) == 8 ? T(1e-308) : T(1e-38);
  std::vector<T> x;
  for (int i = 0; i < 1001; ++i) {
    x.push_back(i % 2 ? -huge : huge);
    x.push_back(i % 3 ? tiny : -tiny / T(3));
  }
  expect_matches_reference(x, "1e308, 1e-308, -1e308, ...");
  std::vector<T> y = {huge, tiny, -huge};
  expect_row<T>(y, tiny, "huge + tiny - huge = tiny");
  std::vector<T> z = {huge, C<T>::min_sub, -huge, C<T>::min_sub};
  expect_row<T>(z, T(2) * C<T>::min_sub, "huge + 2^min - huge + 2^min");
}

TYPED_TEST(ExactSum, ExactCancellationGivesPlusZero) {
  using T = TypeParam;
  std::mt19937_64 g(11);
  for (std::size_t n : {2u, 32u, 1000u}) {
    std::vector<T> x = lognormal_signed<T>(g, n / 2, T(20));
    const std::size_t half = x.size();
    for (std::size_t i = 0; i < half; ++i) x.push_back(-x[i]);
    std::shuffle(x.begin(), x.end(), g);
    expect_row<T>(x, T(0), "x and -x shuffled");
  }
}

// --- fuzz: random exponents over the whole range, random signs ---

TYPED_TEST(ExactSum, FuzzWholeExponentRange) {
  using T = TypeParam;
  constexpr int max_field = (1 << FloatTraits<T>::exponent_bits) - 2;
  std::mt19937_64 g(0xf00d);
  for (int r = 0; r < 2500; ++r) {
    // An exponent window of random position and width (1 field .. the whole range), so that both
    // sums dominated by one term and sums with much cancellation and rounding occur.
    std::uniform_int_distribution<int> field(0, max_field);
    int a = field(g), b = field(g);
    if (a > b) std::swap(a, b);
    if (r % 3 == 0) b = std::min(max_field, a + static_cast<int>(g() % 8));
    std::vector<T> x(1 + g() % (r % 10 == 0 ? 3000 : 60));
    for (auto& v : x) v = random_finite<T>(g, a, b);
    if (r % 4 == 0) {  // cancel most of it
      const std::size_t n = x.size();
      for (std::size_t i = 0; i + 1 < n; ++i) x.push_back(-x[i]);
      std::shuffle(x.begin(), x.end(), g);
    }
    if (r % 50 == 0) x.push_back(r % 100 == 0 ? C<T>::inf : -T(0));
    SCOPED_TRACE("fuzz round " + std::to_string(r));
    expect_matches_reference(x, "fuzz");
    if (::testing::Test::HasFailure()) return;
  }
}

// --- the properties the GPU merge relies on ---

TYPED_TEST(ExactSum, SingleAddsEqualSpanAdd) {
  using T = TypeParam;
  std::mt19937_64 g(3);
  std::vector<T> x = cancellation<T>(g, 999);
  x.push_back(-T(0));
  Superaccumulator<T> acc;
  for (T v : x) acc.add(v);
  EXPECT_BITS_EQ(acc.round(), exact(x));
  EXPECT_EQ(acc.specials().count, x.size());
}

// Short spans and single adds go straight into the limbs until a long span switches the
// accumulator to its chunks; any mix of the two paths gives the exact sum.
TYPED_TEST(ExactSum, DirectAndChunkPathsMix) {
  using T = TypeParam;
  std::mt19937_64 g(13);
  for (int r = 0; r < 20; ++r) {
    std::vector<std::vector<T>> parts;
    for (std::size_t n : {std::size_t(100), std::size_t(1), Superaccumulator<T>::chunk_threshold,
                          std::size_t(10), std::size_t(1), std::size_t(3000)}) {
      parts.push_back(r % 2 ? cancellation<T>(g, n) : lognormal_signed<T>(g, n, T(12)));
    }
    if (r % 5 == 1) parts[3].push_back(-T(0));
    if (r % 5 == 2) parts[1][0] = C<T>::min_sub;  // a subnormal on the direct path
    if (r % 5 == 3) parts[4][0] = -C<T>::min_normal / T(3);  // ... and on the chunk path
    if (r % 5 == 4) parts[5].push_back(-C<T>::inf);
    Superaccumulator<T> acc;
    std::vector<T> all;
    for (const auto& p : parts) {
      if (p.size() == 1) acc.add(p[0]);
      else acc.add(std::span<const T>(p));
      all.insert(all.end(), p.begin(), p.end());
    }
    EXPECT_BITS_EQ(acc.round(), reference_sum(all)) << "round " << r;
    EXPECT_EQ(acc.specials().count, all.size());
  }
  std::vector<T> zeros(5000, -T(0));
  expect_row<T>(zeros, -T(0), "5000 x -0 through the chunks");
  zeros.push_back(T(0));
  expect_row<T>(zeros, T(0), "5000 x -0 and one +0");
}

TYPED_TEST(ExactSum, OrderIndependent) {
  using T = TypeParam;
  std::mt19937_64 g(5);
  std::vector<T> x = lognormal_signed<T>(g, 4099, T(8));
  const T first = exact(x);
  for (int r = 0; r < 30; ++r) {
    std::shuffle(x.begin(), x.end(), g);
    EXPECT_BITS_EQ(exact(x), first);
  }
  std::reverse(x.begin(), x.end());
  EXPECT_BITS_EQ(exact(x), first);
}

TYPED_TEST(ExactSum, MergeAndAddLimbMatchOneAccumulator) {
  using T = TypeParam;
  using Acc = Superaccumulator<T>;
  std::mt19937_64 g(9);
  for (int r = 0; r < 40; ++r) {
    std::vector<T> x = r % 2 ? cancellation<T>(g, 777) : lognormal_signed<T>(g, 777, T(15));
    if (r == 7) x.push_back(C<T>::inf);
    if (r == 9) x = std::vector<T>(13, -T(0));
    const T whole = exact(x);
    // Blocks of random size, as a GPU grid would cut them.
    Acc merged, via_limbs;
    std::size_t begin = 0;
    while (begin < x.size()) {
      const std::size_t len = std::min<std::size_t>(x.size() - begin, 1 + g() % 100);
      Acc block;
      block.add(std::span<const T>(x.data() + begin, len));
      merged.merge(block);
      // What a kernel would hand over: integer limbs and special counts.
      const typename Acc::Limbs limbs = block.limbs();
      for (int i = 0; i < Acc::num_limbs; ++i) {
        if (limbs[i] != 0) via_limbs.add_limb(i, limbs[i]);
      }
      SpecialCounts s;
      for (std::size_t i = begin; i < begin + len; ++i) s.observe(x[i]);
      EXPECT_EQ(s, block.specials());
      via_limbs.add_specials(s);
      begin += len;
    }
    EXPECT_BITS_EQ(merged.round(), whole);
    EXPECT_BITS_EQ(via_limbs.round(), whole);
    EXPECT_EQ(merged.limbs(), via_limbs.limbs());
  }
}

TYPED_TEST(ExactSum, AddLimbAnyValue) {
  using T = TypeParam;
  using Acc = Superaccumulator<T>;
  // v * 2^(32 i + min_exponent) for extreme v, split differently: the same limbs.
  Acc a, b;
  a.add_limb(3, std::numeric_limits<std::int64_t>::max());
  a.add_limb(3, std::numeric_limits<std::int64_t>::min());
  a.add_limb(1, -5);
  b.add_limb(3, -1);
  b.add_limb(1, -5);
  EXPECT_EQ(a.limbs(), b.limbs());
  EXPECT_BITS_EQ(a.round(), b.round());
  // 2^(32 + min_exponent) - 2^min_exponent from add_limb equals the sum of the T values.
  Acc c;
  c.add_limb(1, 1);
  c.add_limb(0, -1);
  SpecialCounts s;
  s.count = 1;
  s.all_negative_zero = false;
  c.add_specials(s);
  const T expected = std::ldexp(T(1), 32 + Acc::min_exponent) - C<T>::min_sub;
  EXPECT_BITS_EQ(c.round(), expected);
  // The top limb is signed: a negative multiple of its weight is beyond the range of T.
  Acc d;
  d.add_limb(Acc::num_limbs - 1, -1);
  EXPECT_BITS_EQ(d.round(), -C<T>::inf);
  EXPECT_THROW(d.add_limb(Acc::num_limbs, 1), std::out_of_range);
  EXPECT_THROW(d.add_limb(-1, 1), std::out_of_range);
}

TYPED_TEST(ExactSum, ZeroFromLimbsUsesSpecialCounts) {
  using T = TypeParam;
  Superaccumulator<T> acc;
  acc.add_limb(2, 0);
  EXPECT_BITS_EQ(acc.round(), T(0));  // no input counted: +0
  SpecialCounts s;
  s.observe(-T(0));
  s.observe(-T(0));
  acc.add_specials(s);
  EXPECT_BITS_EQ(acc.round(), -T(0));  // every input -0
  SpecialCounts t;
  t.observe(T(0));
  acc.add_specials(t);
  EXPECT_BITS_EQ(acc.round(), T(0));
}

// Many inputs of one exponent make a chunk wrap around 2^64 (after 2^11 doubles of significand
// near 2^53); the wrap must be booked exactly.
TYPED_TEST(ExactSum, ChunkWrapAroundIsExact) {
  using T = TypeParam;
  const T near_two = T(2) - C<T>::pow2(1 - C<T>::p);  // significand all ones
  for (std::size_t n : {std::size_t(4097), std::size_t(1) << 20}) {
    std::vector<T> x(n, near_two);
    expect_matches_reference(x, "same exponent, positive");
    for (auto& v : x) v = -v;
    x.push_back(C<T>::pow2(C<T>::p + 1));
    expect_matches_reference(x, "same exponent, negative");
  }
}

// 2^30 limb-level adds force a carry normalisation; the sum stays exact across it. (Double only:
// the code is the same for float, and 2^30 adds take seconds.)
TEST(ExactSumDouble, LimbNormalisationKeepsExactSum) {
  using T = double;
  using Acc = Superaccumulator<T>;
  constexpr std::uint64_t n = Acc::max_adds_between_normalise + 3;
  constexpr std::int64_t v = std::numeric_limits<std::int64_t>::max();
  Acc many;
  for (std::uint64_t i = 0; i < n; ++i) many.add_limb(0, v);
  // n * (2^63 - 1) = 2^93 + 3 * 2^63 - 2^30 - 3 as digits of 32 bits.
  sumlab::detail::uint128 total =
      static_cast<sumlab::detail::uint128>(n) * static_cast<std::uint64_t>(v);
  Acc once;
  for (int i = 0; i < 4; ++i, total >>= 32) {
    once.add_limb(i, static_cast<std::int64_t>(static_cast<std::uint64_t>(total) & 0xffffffffu));
  }
  EXPECT_EQ(many.limbs(), once.limbs());
  EXPECT_BITS_EQ(many.round(), once.round());
}

}  // namespace
