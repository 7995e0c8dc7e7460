// Scans (core/scan/): serial inclusive/exclusive identities, Hillis-Steele and Blelloch (outputs
// and their work/depth formulas), the GPU order models on inputs whose sums are exact, the max
// operator's shape invariance, the segmented operator restarting at heads, and the affine
// operator's associativity within a derived rounding bound.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/float_traits.hpp"
#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_model.hpp"
#include "core/scan/scan_ops.hpp"
#include "core/scan/serial_scan.hpp"
#include "core/scan/tree_scans.hpp"

namespace sumlab::scan {
namespace {

const std::size_t kSizes[] = {0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 1023, 1024, 1025, 4097};

template <class T> std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = T(2.0 * uniform_double(seed, i, 0) - 1.0);
  return x;
}
// Small integers: every partial sum is exact in float (|sum| < 2^24), so any order gives the same bits.
template <class T> std::vector<T> integer_values(std::size_t n, std::uint64_t seed) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = T(int(random_bits(seed, i, 0) % 201) - 100);
  return x;
}
template <class V> void expect_same_bits(const std::vector<V>& a, const std::vector<V>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_bits(a[i], b[i])) << what << " at " << i;
}

template <class T> class ScanTyped : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ScanTyped, Types);

TYPED_TEST(ScanTyped, SerialExclusiveIsInclusiveShifted) {
  using T = TypeParam;
  using Op = PlusOp<T>;
  for (std::size_t n : kSizes) {
    const auto x = random_values<T>(n, 3);
    const auto inc = serial_scan<Op>(std::span<const T>(x), true);
    const auto exc = serial_scan<Op>(std::span<const T>(x), false);
    ASSERT_EQ(exc.size(), n);
    if (n == 0) continue;
    EXPECT_TRUE(same_bits(exc[0], T(0)));
    for (std::size_t i = 0; i + 1 < n; ++i) ASSERT_TRUE(same_bits(exc[i + 1], inc[i])) << n << " " << i;
    for (std::size_t i = 1; i < n; ++i) ASSERT_TRUE(same_bits(inc[i], Op::combine(exc[i], x[i]))) << n << " " << i;
    EXPECT_TRUE(same_bits(inc[0], x[0]));
  }
}

TYPED_TEST(ScanTyped, TreeScansMatchTheirWorkAndDepthFormulas) {
  using T = TypeParam;
  using Op = PlusOp<T>;
  for (std::size_t n : kSizes) {
    const auto x = integer_values<T>(n, 5);
    const auto hs = hillis_steele_scan<Op>(std::span<const T>(x), true);
    EXPECT_EQ(hs.cost.work, hillis_steele_cost(n).work) << n;
    EXPECT_EQ(hs.cost.depth, hillis_steele_cost(n).depth) << n;
    for (bool inclusive : {false, true}) {
      const auto bl = blelloch_scan<Op>(std::span<const T>(x), inclusive);
      EXPECT_EQ(bl.cost.work, blelloch_cost(n, inclusive).work) << n;
      EXPECT_EQ(bl.cost.depth, blelloch_cost(n, inclusive).depth) << n;
    }
  }
  // The closed forms by hand: n = 8 -> Hillis-Steele 7 + 6 + 4 = 17 combines in 3 steps; Blelloch
  // 7 up + 7 down in 6 steps. n = 5 -> HS 4 + 3 + 1 = 8 in 3; Blelloch pads to 8: 14 in 6.
  EXPECT_EQ(hillis_steele_cost(8).work, 17u);
  EXPECT_EQ(hillis_steele_cost(5).work, 8u);
  EXPECT_EQ(hillis_steele_cost(5).depth, 3);
  EXPECT_EQ(blelloch_cost(5, false).work, 14u);
  EXPECT_EQ(blelloch_cost(5, false).depth, 6);
  EXPECT_EQ(blelloch_cost(1, false).work, 0u);
}

TYPED_TEST(ScanTyped, TreeScansEqualSerialWhenEverySumIsExact) {
  using T = TypeParam;
  using Op = PlusOp<T>;
  for (std::size_t n : kSizes) {
    const auto x = integer_values<T>(n, 7);
    for (bool inclusive : {false, true}) {
      const auto ser = serial_scan<Op>(std::span<const T>(x), inclusive);
      expect_same_bits(hillis_steele_scan<Op>(std::span<const T>(x), inclusive).out, ser, "hillis_steele");
      expect_same_bits(blelloch_scan<Op>(std::span<const T>(x), inclusive).out, ser, "blelloch");
    }
  }
}

TYPED_TEST(ScanTyped, ModelsEqualSerialWhenEverySumIsExact) {
  using T = TypeParam;
  using Op = PlusOp<T>;
  const std::size_t sizes[] = {0, 1, 31, 32, 33, 255, 257, 4095, 4097, 70001};
  for (GpuScan alg : kModelledGpuScans)
    for (const ScanShape& s : scan_shapes(alg, false, sizeof(T)))
      for (std::size_t n : sizes) {
        const auto x = integer_values<T>(n, 11);
        for (bool inclusive : {false, true}) {
          const auto m = model_scan<Op>(alg, s, std::span<const T>(x), inclusive);
          expect_same_bits(m, serial_scan<Op>(std::span<const T>(x), inclusive), to_string(s).c_str());
        }
      }
}

TYPED_TEST(ScanTyped, ModelsRoundDifferentlyFromSerialOnRealInputs) {
  // The point of the models: on inputs with rounding, the tree changes the bits. If a model
  // silently ran the serial order this would fail.
  using T = TypeParam;
  using Op = PlusOp<T>;
  const auto x = random_values<T>(20000, 13);
  const auto ser = serial_scan<Op>(std::span<const T>(x), true);
  for (GpuScan alg : kModelledGpuScans) {
    const auto m = model_scan<Op>(alg, ScanShape{128, 4}, std::span<const T>(x), true);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < x.size(); ++i) differ += !same_bits(m[i], ser[i]);
    EXPECT_GT(differ, 0u) << to_string(alg);
  }
}

TYPED_TEST(ScanTyped, MaxIsShapeInvariantBitForBit) {
  using T = TypeParam;
  using Op = MaxOp<T>;
  // Negative values only, with signed zeros sprinkled in: the running max is a zero for most of
  // the array, and +0 must win over -0 whichever way a tree pairs them. The first 100 are -0 alone.
  auto x = random_values<T>(5000, 17);
  for (auto& v : x) v = -std::fabs(v) - T(1);
  for (std::size_t i = 0; i < x.size(); i += 7) x[i] = (i / 7) % 2 ? T(-0.0) : T(0.0);
  for (std::size_t i = 0; i < 100; ++i) x[i] = T(-0.0);
  for (bool inclusive : {false, true}) {
    const auto ser = serial_scan<Op>(std::span<const T>(x), inclusive);
    expect_same_bits(hillis_steele_scan<Op>(std::span<const T>(x), inclusive).out, ser, "hs");
    expect_same_bits(blelloch_scan<Op>(std::span<const T>(x), inclusive).out, ser, "blelloch");
    for (GpuScan alg : kModelledGpuScans)
      for (const ScanShape& s : scan_shapes(alg, true, sizeof(T)))
        expect_same_bits(model_scan<Op>(alg, s, std::span<const T>(x), inclusive), ser, to_string(s).c_str());
  }
  const auto ser = serial_scan<Op>(std::span<const T>(x), true);
  EXPECT_TRUE(same_bits(ser[105], T(-0.0)));  // only -0 so far (105 = 7 * 15 is a -0)
  EXPECT_TRUE(same_bits(ser[112], T(0.0)));   // the first +0 (112 = 7 * 16) wins from there on
  EXPECT_TRUE(same_bits(ser.back(), T(0.0)));
  EXPECT_TRUE(same_bits(Op::combine(T(-0.0), T(0.0)), T(0.0)));
  EXPECT_TRUE(same_bits(Op::combine(T(0.0), T(-0.0)), T(0.0)));
  EXPECT_TRUE(std::isnan(Op::combine(T(1), std::numeric_limits<T>::quiet_NaN())));
}

// The branch-free combine against its definition written out case by case, bit for bit on every
// ordered pair of special and ordinary values (two NaNs with different payloads and signs: the
// earlier one is returned whole).
TYPED_TEST(ScanTyped, MaxCombineIsItsDefinitionOnEveryPair) {
  using T = TypeParam;
  using Bits = typename FloatTraits<T>::Bits;
  const auto definition = [](T earlier, T later) {
    if (std::isnan(earlier)) return earlier;
    if (std::isnan(later)) return later;
    if (earlier == later) return std::signbit(earlier) && !std::signbit(later) ? later : earlier;
    return earlier < later ? later : earlier;
  };
  const T inf = std::numeric_limits<T>::infinity();
  const Bits quiet = std::bit_cast<Bits>(std::numeric_limits<T>::quiet_NaN());
  const Bits sign = Bits(1) << (8 * sizeof(T) - 1);
  const std::vector<T> v{std::bit_cast<T>(Bits(quiet | 1)), std::bit_cast<T>(Bits(quiet | 2 | sign)), -inf, T(-2.5),
                         T(-0.0), T(0.0), std::numeric_limits<T>::denorm_min(), T(1), T(1), inf};
  for (T a : v)
    for (T b : v) {
      const T got = MaxOp<T>::combine(a, b), want = definition(a, b);
      EXPECT_EQ(std::bit_cast<Bits>(got), std::bit_cast<Bits>(want)) << a << " then " << b;
    }
}

// MaxOp says it is exactly_associative, so the GPU's look-back reduces the aggregates it finds as a
// tree: every triple of the values above (NaN payloads and signed zeros included) must bracket to
// the same bits, and identity() must be an identity on both sides, bit for bit (the tree pads with it). PlusOp
// does not say so, and a triple shows why.
TYPED_TEST(ScanTyped, MaxIsAssociativeBitForBitAndPlusIsNot) {
  using T = TypeParam;
  using Bits = typename FloatTraits<T>::Bits;
  using Op = MaxOp<T>;
  static_assert(Op::exactly_associative && !PlusOp<T>::exactly_associative && !SegmentedOp<T>::exactly_associative &&
                !AffineOp<T>::exactly_associative);
  const T inf = std::numeric_limits<T>::infinity();
  const Bits quiet = std::bit_cast<Bits>(std::numeric_limits<T>::quiet_NaN());
  const Bits sign = Bits(1) << (8 * sizeof(T) - 1);
  const std::vector<T> v{std::bit_cast<T>(Bits(quiet | 1)), std::bit_cast<T>(Bits(quiet | 2 | sign)), -inf, T(-2.5),
                         T(-0.0), T(0.0), std::numeric_limits<T>::denorm_min(), T(1), inf};
  for (T a : v) {
    EXPECT_EQ(std::bit_cast<Bits>(Op::combine(Op::identity(), a)), std::bit_cast<Bits>(a)) << a;
    EXPECT_EQ(std::bit_cast<Bits>(Op::combine(a, Op::identity())), std::bit_cast<Bits>(a)) << a;
    for (T b : v)
      for (T c : v)
        EXPECT_EQ(std::bit_cast<Bits>(Op::combine(Op::combine(a, b), c)), std::bit_cast<Bits>(Op::combine(a, Op::combine(b, c))))
            << a << ", " << b << ", " << c;
  }
  const T big = T(2) / std::numeric_limits<T>::epsilon();  // 1 is half an ulp of big: big + 1 rounds to big
  EXPECT_FALSE(same_bits(PlusOp<T>::combine(PlusOp<T>::combine(big, T(1)), T(1)),
                         PlusOp<T>::combine(big, PlusOp<T>::combine(T(1), T(1)))));
}

// The look-back's fold pads with right_identity(): combine(p, e) must give p's bits back for every
// p, signed zeros and infinities included (+0 would turn a -0 sum into +0).
TYPED_TEST(ScanTyped, RightIdentityLeavesEveryValueAsItIs) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> v{-inf, T(-2.5), T(-0.0), T(0.0), std::numeric_limits<T>::denorm_min(), T(3), inf};
  for (T a : v) {
    EXPECT_TRUE(same_bits(PlusOp<T>::combine(a, PlusOp<T>::right_identity()), a)) << a;
    EXPECT_TRUE(same_bits(MaxOp<T>::combine(a, MaxOp<T>::right_identity()), a)) << a;
    EXPECT_TRUE(std::isnan(MaxOp<T>::combine(std::numeric_limits<T>::quiet_NaN(), MaxOp<T>::right_identity())));
    for (bool head : {false, true}) {
      const Flagged<T> f{head, a};
      EXPECT_TRUE(same_bits(SegmentedOp<T>::combine(f, SegmentedOp<T>::right_identity()), f)) << a;
    }
    for (T b : v) {
      const Affine<T> f{a, b};
      EXPECT_TRUE(same_bits(AffineOp<T>::combine(f, AffineOp<T>::right_identity()), f)) << a << " " << b;
    }
  }
}

TYPED_TEST(ScanTyped, SegmentedRestartsAtEveryHead) {
  using T = TypeParam;
  using Op = SegmentedOp<T>;
  using V = Flagged<T>;
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(1000), std::size_t(4099)}) {
    std::vector<V> x(n);
    const auto v = integer_values<T>(n, 19);
    for (std::size_t i = 0; i < n; ++i) x[i] = V{i % 37 == 5 || random_bits(19, i, 3) % 50 == 0, v[i]};
    // By hand: the running sum since the last head (or since 0).
    std::vector<T> expect(n);
    T run = 0;
    for (std::size_t i = 0; i < n; ++i) {
      run = x[i].head ? v[i] : run + v[i];
      expect[i] = run;
    }
    std::vector<std::vector<V>> outs{serial_scan<Op>(std::span<const V>(x), true),
                                     hillis_steele_scan<Op>(std::span<const V>(x), true).out,
                                     blelloch_scan<Op>(std::span<const V>(x), true).out,
                                     model_scan<Op>(GpuScan::warp_hillis_steele, {96, 3}, std::span<const V>(x), true),
                                     model_scan<Op>(GpuScan::block_blelloch, {32, 2}, std::span<const V>(x), true),
                                     model_scan<Op>(GpuScan::warp_hs_chained, {64, 2}, std::span<const V>(x), true)};
    for (const auto& o : outs)
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(o[i].value, expect[i]) << n << " " << i;
    // Exclusive: the value carried into i, i.e. the inclusive value at i - 1.
    const auto exc = model_scan<Op>(GpuScan::warp_hillis_steele, {32, 1}, std::span<const V>(x), false);
    for (std::size_t i = 1; i < n; ++i) ASSERT_EQ(exc[i].value, expect[i - 1]) << i;
  }
}

TYPED_TEST(ScanTyped, AffineScanIsTheRecurrenceAndAssociativeWithinItsBound) {
  using T = TypeParam;
  using Op = AffineOp<T>;
  using V = Affine<T>;
  // Associativity on random triples p, q, r (a, b in [-2, 2)). Derivation, u = 2^-p, gamma_k = ku/(1-ku):
  //   (p then q) then r: b = fl(fl(r.a * fl(fl(q.a p.b) + q.b)) + r.b): the exact terms r.a q.a p.b,
  //     r.a q.b, r.b carry at most 4, 3, 1 roundings;
  //   p then (q then r): b = fl(fl(fl(r.a q.a) p.b) + fl(fl(r.a q.b) + r.b)): at most 3, 3, 2.
  //   So each is within gamma_4 S of the exact b, S = |r.a q.a p.b| + |r.a q.b| + |r.b|, and they
  //   differ by at most 2 gamma_4 S; the a's (two products each) by at most 2 gamma_2 |r.a q.a p.a|.
  //   (No underflow or overflow at these magnitudes.)
  const double g4 = gamma<T>(4), g2 = gamma<T>(2);
  int differ = 0;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    auto draw = [&](std::uint32_t s) { return T(4.0 * uniform_double(23, i, s) - 2.0); };
    const V p{draw(0), draw(1)}, q{draw(2), draw(3)}, r{draw(4), draw(5)};
    const V left = Op::combine(Op::combine(p, q), r), right = Op::combine(p, Op::combine(q, r));
    const double S = std::fabs(double(r.a) * q.a * p.b) + std::fabs(double(r.a) * q.b) + std::fabs(double(r.b));
    ASSERT_LE(std::fabs(double(left.b) - double(right.b)), 2 * g4 * S * (1 + 1e-12)) << i;
    ASSERT_LE(std::fabs(double(left.a) - double(right.a)), 2 * g2 * std::fabs(double(r.a) * q.a * p.a) * (1 + 1e-12));
    differ += !same_bits(left.b, right.b);
  }
  EXPECT_GT(differ, 0);  // it is not associative bit for bit, only within the bound

  // The serial affine scan is the recurrence loop, bit for bit (same operations in the same order).
  const std::size_t n = 3000;
  std::vector<V> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = V{T(0.5 + 0.49 * uniform_double(29, i, 0)), T(uniform_double(29, i, 1) - 0.5)};
  const auto s = serial_scan<Op>(std::span<const V>(x), true);
  T h = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const T ah = x[i].a * h;
    h = ah + x[i].b;
    ASSERT_TRUE(same_bits(s[i].b, i == 0 ? x[0].b : h)) << i;
  }
}

TYPED_TEST(ScanTyped, ChainedCarryIsTheLeftFoldOfTheTileTotals) {
  // Tiles of 32 (b32x1) whose totals are 2^p, 1, 1, then zeros (p = the precision: 2^p + 1 is a tie
  // that rounds to even, 2^p). By hand, the left fold of the totals gives tile 3 the carry
  // (2^p + 1) + 1 = 2^p, while warp_hillis_steele's scan of the totals pairs the two ones first:
  // 2^p + (1 + 1) = 2^p + 2.
  using T = TypeParam;
  using Op = PlusOp<T>;
  const T big = std::ldexp(T(1), std::numeric_limits<T>::digits);
  std::vector<T> x(4 * 32 + 5, T(0));
  x[0] = big;
  x[32] = T(1);
  x[64] = T(1);
  const ScanShape s{32, 1};
  const auto chained = model_scan<Op>(GpuScan::warp_hs_chained, s, std::span<const T>(x), true);
  const auto tree = model_scan<Op>(GpuScan::warp_hillis_steele, s, std::span<const T>(x), true);
  EXPECT_EQ(chained[40], big);  // tile 1: 2^p + 1 rounds to 2^p
  EXPECT_EQ(chained[96], big);
  EXPECT_EQ(chained.back(), big);
  EXPECT_EQ(tree[96], big + T(2));
  // Exclusive: a tile's first output is its carry itself; tile 0's is the identity.
  const auto exc = model_scan<Op>(GpuScan::warp_hs_chained, s, std::span<const T>(x), false);
  EXPECT_TRUE(same_bits(exc[0], T(0)));
  EXPECT_EQ(exc[32], big);
  EXPECT_EQ(exc[96], big);
}

TEST(ScanShapes, ValidationAndNames) {
  EXPECT_EQ(validate_scan_shape(GpuScan::warp_hillis_steele, {96, 3}, 100, 4), "");
  EXPECT_NE(validate_scan_shape(GpuScan::warp_hillis_steele, {100, 3}, 100, 4), "");
  EXPECT_NE(validate_scan_shape(GpuScan::warp_hillis_steele, {96, 17}, 100, 4), "");
  EXPECT_NE(validate_scan_shape(GpuScan::block_blelloch, {96, 2}, 100, 4), "");
  EXPECT_NE(validate_scan_shape(GpuScan::block_blelloch, {128, 3}, 100, 4), "");
  EXPECT_NE(validate_scan_shape(GpuScan::block_blelloch, {1024, 16}, 100, 16), "");  // shared memory
  EXPECT_EQ(validate_scan_shape(GpuScan::block_blelloch, {1024, 2}, 100, 16), "");
  EXPECT_EQ(validate_scan_shape(GpuScan::cub, {0, 0}, 100, 4), "");
  EXPECT_EQ(validate_scan_shape(GpuScan::warp_hs_chained, {96, 7}, 100, 16), "");
  EXPECT_NE(validate_scan_shape(GpuScan::warp_hs_chained, {96, 5}, 100, 4), "");   // not compiled
  EXPECT_NE(validate_scan_shape(GpuScan::warp_hs_chained, {1024, 16}, 100, 8), "");  // shared memory
  for (GpuScan alg : kModelledGpuScans)
    for (std::size_t bytes : {4, 8, 16}) {
      const auto shapes = scan_shapes(alg, false, bytes);
      EXPECT_GE(shapes.size(), 8u) << to_string(alg) << " " << bytes;
      for (const ScanShape& sh : shapes)
        EXPECT_EQ(validate_scan_shape(alg, sh, 100, bytes), "") << to_string(alg) << " " << to_string(sh) << " " << bytes;
    }
  EXPECT_EQ(scan_shapes(GpuScan::warp_hs_chained, false, 4).size(), 16u);
  EXPECT_EQ(scan_shapes(GpuScan::warp_hs_chained, false, 8).size(), 16u);
  EXPECT_EQ(scan_shapes(GpuScan::warp_hs_chained, false, 16).size(), 13u);  // b256x23, b384x23, b512x23 past 99 KiB
  // A staging of 33 * items values a warp after a header, within 99 KiB (opted in past 48).
  EXPECT_EQ(scan_shared_bytes(GpuScan::warp_hs_chained, {256, 23}, 4), 208u + 1024u + 8u * 33u * 23u * 4u);
  EXPECT_EQ(validate_scan_shape(GpuScan::warp_hs_chained, {512, 23}, 100, 4), "");   // 49 KiB
  EXPECT_EQ(validate_scan_shape(GpuScan::warp_hs_chained, {512, 23}, 100, 8), "");   // 97 KiB
  EXPECT_NE(validate_scan_shape(GpuScan::warp_hs_chained, {256, 23}, 100, 16), "");  // 99.5 KiB
  EXPECT_EQ(validate_scan_shape(GpuScan::warp_hs_chained, default_scan_shape(GpuScan::warp_hs_chained, 16), 100, 16), "");
  EXPECT_EQ(to_string(default_scan_shape(GpuScan::warp_hs_chained, 4)), "b512x23");
  EXPECT_EQ(to_string(default_scan_shape(GpuScan::warp_hs_chained, 8)), "b192x23");
  EXPECT_EQ(to_string(default_scan_shape(GpuScan::warp_hs_chained, 16)), "b256x15");  // 63 KiB, opted in
  // max gives the same bits at every shape, so its default is its own fastest.
  EXPECT_EQ(to_string(default_scan_shape(GpuScan::warp_hs_chained, 8, "max")), "b256x15");
  EXPECT_EQ(to_string(default_scan_shape(GpuScan::warp_hs_chained, 4, "max")), "b512x23");
  EXPECT_EQ(to_string(default_scan_shape(GpuScan::warp_hs_chained, 8, "affine")), "b192x23");
  EXPECT_EQ(to_string(ScanShape{256, 4}), "b256x4");
  ASSERT_TRUE(parse_scan_shape("b96x3").has_value());
  EXPECT_EQ(parse_scan_shape("b96x3")->block, 96);
  EXPECT_FALSE(parse_scan_shape("b96").has_value());
  EXPECT_FALSE(parse_scan_shape("96x3").has_value());
  EXPECT_EQ(parse_gpu_scan("block_blelloch"), GpuScan::block_blelloch);
  EXPECT_FALSE(parse_gpu_scan("nope").has_value());
  EXPECT_THROW(model_scan<PlusOp<float>>(GpuScan::cub, {}, std::span<const float>(), true), std::invalid_argument);
}

}  // namespace
}  // namespace sumlab::scan
