// The row kernels' arithmetic and their CPU model (core/row_reduce/): merges associative to
// rounding (tolerances derived from u and the magnitudes), identities exact, argmax semantics,
// empty and one-element rows, NaN/Inf as documented, the textbook failure, and the model of
// warp-per-row Welford against an independent re-implementation of the same order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/generators.hpp"
#include "tests/core/serial_moments.hpp"
#include "core/row_reduce/argmax.hpp"
#include "core/row_reduce/online_softmax.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_model.hpp"
#include "core/row_reduce/row_tree.hpp"
#include "core/row_reduce/welford.hpp"

namespace sumlab::row_reduce {
namespace {

template <class T> double unit_roundoff() { return std::ldexp(1.0, -std::numeric_limits<T>::digits); }

template <class T> bool same_bits(T a, T b) {
  if (a != a && b != b) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

const RowShape kShapes[] = {{RowLayout::warp_per_row, 32},  {RowLayout::warp_per_row, 256},
                            {RowLayout::block_per_row, 32}, {RowLayout::block_per_row, 96},
                            {RowLayout::block_per_row, 256}, {RowLayout::block_per_row, 1024}};

const RowKernel kMoments[] = {RowKernel::textbook, RowKernel::two_pass, RowKernel::welford, RowKernel::welford_equal};
const RowKernel kSoftmax[] = {RowKernel::softmax_online, RowKernel::softmax_three_pass};

template <class T> std::vector<T> offset_rows(std::int64_t rows, std::int64_t cols, double offset, std::uint64_t seed) {
  std::vector<T> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(offset + standard_normal(seed, i));
  return x;
}

// --- Chan merge -----------------------------------------------------------------------------------

template <class T> class RowChan : public ::testing::Test {};
using AccTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RowChan, AccTypes);

// Associativity to rounding. First-order error of one merge (a, b) -> r, u the unit roundoff,
// M = max |mean_i|, D = max |mean_i - mean_j|, W = na nb / n <= N / 4:
//   mean: d = fl(mean_b - mean_a) (u|d|), d * fl(nb/n) (2u), + mean_a (u|r.mean|): <= u M + 3u D.
//   m2:   m2_a + m2_b, d*d, na*nb/n, the product and the final sum round (<= 5u of the exact,
//         all-positive M2 = T); and an error e in an input mean moves d, hence d^2 W, by
//         2|d| e W <= 2 D (u M + 3u D) N/4.
// Two merges per grouping, and the inner merge's errors pass through the outer one unchanged to
// first order, so each grouping is within 2 (u M + 3u D) (mean) and 10u T + u D (M + 3D) N (m2)
// of the exact value, and the two groupings within twice that. The test allows 2x more again for
// second-order terms.
TYPED_TEST(RowChan, MergeIsAssociativeToRoundingWithDerivedTolerance) {
  using T = TypeParam;
  const double u = unit_roundoff<T>();
  std::mt19937_64 rng(11);
  double worst_mean = 0, worst_m2 = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const double offsets[] = {0.0, 3.0, 1e3, 1e4};
    RowMoments<T> s[3];
    double mean_d[3];
    for (int i = 0; i < 3; ++i) {
      const int n = 1 + static_cast<int>(rng() % 200);
      const double mu = offsets[rng() % 4] + 5.0 * std::normal_distribution<double>()(rng);
      std::normal_distribution<double> nd(mu, 1.0 + static_cast<double>(rng() % 10));
      s[i] = moments_identity<T>();
      for (int k = 0; k < n; ++k) s[i] = welford_step(s[i], static_cast<T>(nd(rng)));
      mean_d[i] = static_cast<double>(s[i].mean);
    }
    const auto left = chan_merge(chan_merge(s[0], s[1]), s[2]);
    const auto right = chan_merge(s[0], chan_merge(s[1], s[2]));
    // The merged summary in long double (the "exact" T for the bound).
    long double n = 0, mean = 0, m2 = 0;
    for (const auto& p : s) {
      const long double nb = p.n, nn = n + nb, d = static_cast<long double>(p.mean) - mean;
      m2 = m2 + static_cast<long double>(p.m2) + (n > 0 ? d * d * n * nb / nn : 0.0L);
      mean = n > 0 ? mean + d * nb / nn : static_cast<long double>(p.mean);
      n = nn;
    }
    const double M = std::max({std::fabs(mean_d[0]), std::fabs(mean_d[1]), std::fabs(mean_d[2])});
    const double D = std::max({std::fabs(mean_d[0] - mean_d[1]), std::fabs(mean_d[0] - mean_d[2]),
                               std::fabs(mean_d[1] - mean_d[2])});
    const double N = static_cast<double>(n);
    const double tol_mean = 2 * 2 * 2 * (u * M + 3 * u * D);
    const double tol_m2 = 2 * 2 * (10 * u * static_cast<double>(m2) + u * D * (M + 3 * D) * N);
    EXPECT_EQ(left.n, right.n);
    const double dm = std::fabs(static_cast<double>(left.mean) - static_cast<double>(right.mean));
    const double d2 = std::fabs(static_cast<double>(left.m2) - static_cast<double>(right.m2));
    ASSERT_LE(dm, tol_mean) << "trial " << trial;
    ASSERT_LE(d2, tol_m2) << "trial " << trial << " m2 " << static_cast<double>(m2);
    worst_mean = std::max(worst_mean, tol_mean > 0 ? dm / tol_mean : 0.0);
    worst_m2 = std::max(worst_m2, tol_m2 > 0 ? d2 / tol_m2 : 0.0);
  }
  this->RecordProperty("worst_mean_fraction_of_tolerance", std::to_string(worst_mean));
  this->RecordProperty("worst_m2_fraction_of_tolerance", std::to_string(worst_m2));
}

TYPED_TEST(RowChan, GeneralMergeIsCoreMomentsMergeBitForBitAndEmptySidesAreExact) {
  using T = TypeParam;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> nd(1e3, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    RowMoments<T> a = moments_identity<T>(), b = moments_identity<T>();
    WelfordAccumulator<T> wa, wb;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 40); k < n; ++k) {
      const T x = static_cast<T>(nd(rng));
      a = welford_step(a, x);
      wa.add(x);
    }
    for (int k = 0, n = 1 + static_cast<int>(rng() % 40); k < n; ++k) {
      const T x = static_cast<T>(nd(rng));
      b = welford_step(b, x);
      wb.add(x);
    }
    ASSERT_TRUE(same_bits(a.mean, wa.state.mean) && same_bits(a.m2, wa.state.m2));
    const auto r = chan_merge(a, b);
    const auto c = sumlab::chan_merge(wa.state, wb.state);
    EXPECT_TRUE(same_bits(r.n, c.count) && same_bits(r.mean, c.mean) && same_bits(r.m2, c.m2));
    const auto e = moments_identity<T>();
    for (auto m : {chan_merge(e, a), chan_merge(a, e), chan_merge_equal(e, a), chan_merge_equal(a, e)})
      EXPECT_TRUE(same_bits(m.n, a.n) && same_bits(m.mean, a.mean) && same_bits(m.m2, a.m2));
  }
}

// Equal counts up to kChanEqualCountLimit skip the merge's two divisions and must keep the general
// merge's bits: every k to the limit (float) or the powers of two, their neighbours and random
// counts to it (double), and the first counts past it, against the independent oracle; means and
// M2s spread over magnitudes, so the products round.
TYPED_TEST(RowChan, EqualCountsSkipTheDivisionsWithTheGeneralMergesBits) {
  using T = TypeParam;
  const std::int64_t limit = static_cast<std::int64_t>(kChanEqualCountLimit<T>);
  ASSERT_EQ(limit, std::int64_t(1) << (std::numeric_limits<T>::digits / 2));
  std::vector<std::int64_t> counts;
  std::mt19937_64 rng(27);
  if constexpr (sizeof(T) == 4) {
    for (std::int64_t k = 1; k <= limit; ++k) counts.push_back(k);
  } else {
    for (std::int64_t k = 1; k <= 4096; ++k) counts.push_back(k);
    for (std::int64_t p = 4096; p <= limit; p *= 2)
      for (std::int64_t k : {p - 1, p, p + 1}) counts.push_back(std::min(k, limit));
    for (int i = 0; i < 4096; ++i) counts.push_back(1 + static_cast<std::int64_t>(rng() % std::uint64_t(limit)));
  }
  for (std::int64_t k : {limit + 1, limit + 2, 3 * limit}) counts.push_back(k);
  // Past the limit the division is no longer exact for every k: the first counts where na nb / n
  // rounds away from k / 2 (k^2 rounds from about 2^(p/2) sqrt(2) up), so a limit set too high fails.
  int inexact = 0;
  for (std::int64_t k = limit; inexact < 8; ++k) {
    const T n = static_cast<T>(k);
    if (n * n / (n + n) != n * T(0.5)) {
      counts.push_back(k);
      ++inexact;
    }
  }
  std::uniform_real_distribution<double> mag(-30.0, 30.0), unit(-1.0, 1.0);
  std::int64_t checked = 0;
  for (std::int64_t k : counts) {
    for (int trial = 0; trial < 4; ++trial) {
      const T n = static_cast<T>(k);
      const T ma = static_cast<T>(unit(rng) * std::exp2(mag(rng))), mb = static_cast<T>(ma + unit(rng) * std::exp2(mag(rng)));
      const T qa = static_cast<T>(std::fabs(unit(rng)) * std::exp2(mag(rng))), qb = static_cast<T>(std::fabs(unit(rng)) * std::exp2(mag(rng)));
      const RowMoments<T> a{n, ma, qa}, b{n, mb, qb};
      const auto r = chan_merge(a, b);
      const auto c = sumlab::chan_merge(MomentSummary<T>{n, ma, qa}, MomentSummary<T>{n, mb, qb});
      ASSERT_TRUE(same_bits(r.n, c.count) && same_bits(r.mean, c.mean) && same_bits(r.m2, c.m2))
          << "k " << k << " means " << ma << ", " << mb << " m2 " << qa << ", " << qb << ": " << r.mean << " " << r.m2
          << " vs " << c.mean << " " << c.m2;
      ++checked;
    }
  }
  this->RecordProperty("merges_checked", std::to_string(checked));
}

// The ops marked exact_identity (the GPU's tree skips the steps of its butterfly over warp totals
// where one side is always the identity, gpu/rows/row_tree.cuh): merging the identity on the right
// gives the left side, and two identities the identity, bit for bit (a NaN stays a NaN) over
// ordinary, empty, one-element, infinite and NaN states; a sum's identity is not exact.
TYPED_TEST(RowChan, ExactIdentityOpsMergeTheIdentityExactly) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  static_assert(ChanMergeOp<T>::exact_identity && ChanEqualMergeOp<T>::exact_identity && OnlineSoftmaxOp<T>::exact_identity);
  std::mt19937_64 rng(31);
  std::normal_distribution<double> nd(0.0, 1e3);
  std::vector<RowMoments<T>> moments{moments_identity<T>(), {T(1), T(-0.0), T(0)}, {T(3), inf, nan}, {T(2), nan, nan}};
  std::vector<SoftmaxState<T>> softmax{softmax_identity<T>(), {-inf, T(3)}, {inf, T(1)}, {T(0), nan}, {T(-0.0), T(1)}};
  for (int i = 0; i < 200; ++i) {
    moments.push_back({static_cast<T>(1 + rng() % 5000), static_cast<T>(nd(rng)), static_cast<T>(std::fabs(nd(rng)))});
    softmax.push_back({static_cast<T>(nd(rng)), static_cast<T>(1 + std::fabs(nd(rng)))});
  }
  auto same = [](T a, T b) { return (a != a && b != b) || same_bits(a, b); };
  for (const auto& x : moments)
    for (const auto& r : {ChanMergeOp<T>::combine(x, moments_identity<T>()), ChanEqualMergeOp<T>::combine(x, moments_identity<T>())})
      EXPECT_TRUE(same(r.n, x.n) && same(r.mean, x.mean) && same(r.m2, x.m2)) << x.n << " " << x.mean << " " << x.m2;
  for (const auto& x : softmax) {
    const auto r = OnlineSoftmaxOp<T>::combine(x, softmax_identity<T>());
    EXPECT_TRUE(same(r.m, x.m) && same(r.l, x.l)) << x.m << " " << x.l;
  }
  const auto ii = OnlineSoftmaxOp<T>::combine(softmax_identity<T>(), softmax_identity<T>());
  EXPECT_TRUE(same_bits(ii.m, -inf) && same_bits(ii.l, T(0)));
  // Why sums are left out: -0 + (+0) is +0.
  EXPECT_FALSE(same_bits(T(-0.0) + T(0), T(-0.0)));
}

// What the GPU's butterfly over a block's warp totals does for an exact-identity op
// (gpu/rows/row_tree.cuh, butterfly_over_warps): lanes >= warps hold the identity and the steps
// m >= p (p the next power of two at or above warps) are skipped. Lane 0 must end with the full
// butterfly's bits (the model's, core/row_reduce/row_tree.hpp), for every warp count 1..32.
template <class Op> typename Op::State skipped_butterfly_lane0(std::array<typename Op::State, 32> v, int warps) {
  int p = 1;
  while (p < warps) p <<= 1;
  for (int m = p >> 1; m > 0; m >>= 1) {
    std::array<typename Op::State, 32> next;
    for (int l = 0; l < 32; ++l) next[l] = Op::combine(v[l], v[l ^ m]);
    v = next;
  }
  return v[0];
}

TYPED_TEST(RowChan, ButterflyOverWarpTotalsWithoutIdentityStepsKeepsLaneZerosBits) {
  using T = TypeParam;
  std::mt19937_64 rng(37);
  std::normal_distribution<double> nd(1e2, 30.0);
  auto same = [](T a, T b) { return (a != a && b != b) || same_bits(a, b); };
  auto check = [&]<class Op>(Op, auto make) {
    for (int warps = 1; warps <= 32; ++warps)
      for (int trial = 0; trial < 20; ++trial) {
        std::array<typename Op::State, 32> lanes;
        for (int l = 0; l < 32; ++l) lanes[l] = l < warps ? make() : Op::identity();
        const auto skipped = skipped_butterfly_lane0<Op>(lanes, warps);
        order_model::warp_tree_lanes<OrderModelOp<Op>>(lanes, WarpStage::xor_butterfly);
        if constexpr (requires { skipped.n; })
          ASSERT_TRUE(same(skipped.n, lanes[0].n) && same(skipped.mean, lanes[0].mean) && same(skipped.m2, lanes[0].m2))
              << "warps " << warps;
        else
          ASSERT_TRUE(same(skipped.m, lanes[0].m) && same(skipped.l, lanes[0].l)) << "warps " << warps;
      }
  };
  // Equal counts (the merges without divisions) and unequal ones; softmax states around one max.
  auto moments = [&] { return RowMoments<T>{static_cast<T>(1 + rng() % 3 * 32), static_cast<T>(nd(rng)), static_cast<T>(std::fabs(nd(rng)))}; };
  auto softmax = [&] { return SoftmaxState<T>{static_cast<T>(nd(rng) / 30), static_cast<T>(1 + std::fabs(nd(rng)))}; };
  check(ChanMergeOp<T>{}, moments);
  check(ChanEqualMergeOp<T>{}, moments);
  check(OnlineSoftmaxOp<T>{}, softmax);
}

// --- Welford's division by the count (core/row_reduce/welford.hpp) --------------------------------

// Where d / n lies exactly halfway between two subnormals: the one case the theorem excepts.
// 2 d / n is then an odd integer number of the smallest subnormal s. With |d| < n 2^emin, 2 d / s
// is an integer of at most 2p - 2 bits held exactly (a power-of-two scaling), fmod is exact, and
// 2 d / (n s) < 2^p where it is an integer.
template <class T> bool subnormal_midpoint(T d, T n) {
  if (!(std::fabs(d) < n * std::numeric_limits<T>::min())) return false;
  const T twice = std::ldexp(std::fabs(d), std::numeric_limits<T>::digits - std::numeric_limits<T>::min_exponent + 1);
  return std::fmod(twice, n) == T(0) && std::fmod(twice / n, T(2)) == T(1);
}

// q against d / n, bit for bit; returns whether this (d, n) was an excepted midpoint (then q is a
// neighbour of d / n one subnormal away).
template <class T> bool check_division(T d, T n, std::uint64_t& midpoints) {
  const T q = divide_by_count(d, n, count_reciprocal(n)), want = d / n;
  if (subnormal_midpoint(d, n)) {
    ++midpoints;
    EXPECT_TRUE(same_bits(q, want) || std::fabs(q - want) == std::numeric_limits<T>::denorm_min()) << d << " / " << n;
    return true;
  }
  if (d == T(0)) {
    EXPECT_EQ(q, T(0));
    EXPECT_FALSE(std::signbit(q));  // +0 whatever d's sign
    return false;
  }
  EXPECT_TRUE(same_bits(q, want)) << std::hexfloat << d << " / " << n << ": " << q << " against " << want;
  return false;
}

template <class T> class WelfordDivision : public ::testing::Test {};
TYPED_TEST_SUITE(WelfordDivision, AccTypes);

// Every binade of d (random bit patterns, every finite value likely), counts from 1 to the limit:
// the small ones, powers of two and their neighbours, and random ones up to the limit, which is
// where the theorem's margin is thinnest.
TYPED_TEST(WelfordDivision, IsTheCorrectlyRoundedQuotientOverEveryBinade) {
  using T = TypeParam;
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const T limit = kCountReciprocalLimit<T>;
  EXPECT_EQ(limit, std::ldexp(T(1), std::numeric_limits<T>::digits - 3));
  std::vector<T> counts;
  for (int n = 1; n <= 64; ++n) counts.push_back(T(n));
  for (T p = 128; p <= limit; p *= 2) counts.insert(counts.end(), {p - 1, p, p + 1 <= limit ? p + 1 : p});
  std::mt19937_64 rng(11);
  for (int i = 0; i < 64; ++i) counts.push_back(T(1 + rng() % std::uint64_t(limit)));
  std::uint64_t midpoints = 0, cases = 0;
  for (T n : counts)
    for (int i = 0; i < 20000; ++i) {
      Bits b = static_cast<Bits>(rng());
      T d;
      std::memcpy(&d, &b, sizeof d);
      if (!std::isfinite(d)) continue;
      if (i % 4 == 0 && d != T(0)) d = std::ldexp(d, -std::ilogb(d) + std::numeric_limits<T>::min_exponent - 1 - int(rng() % 40));  // near and below the subnormals
      if (!std::isfinite(d)) continue;
      check_division(d, n, midpoints);
      ++cases;
    }
  EXPECT_GT(cases, 1000000u);
  this->RecordProperty("subnormal_midpoints", std::to_string(midpoints));
}

// Positive float subnormals (the first 4096, then every 61st; every one with SUMLAB_EXHAUSTIVE=1,
// 11 s: 1,472,199 of 2,944,402 midpoints differ), by counts that make midpoints: the exception
// happens (9 s / 6 = 1.5 s rounds to 2 s, the division gives s) and is the only one.
TEST(WelfordDivision, SubnormalMidpointsAreTheOnlyExceptionForFloat) {
  const float s = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(9 * s / 6, 2 * s);
  EXPECT_EQ(divide_by_count(9 * s, 6.f, count_reciprocal(6.f)), s);
  const char* all = std::getenv("SUMLAB_EXHAUSTIVE");
  const std::uint32_t stride = all != nullptr && std::string(all) == "1" ? 1 : 61;
  std::uint64_t midpoints = 0, differ = 0;
  for (float n : {3.f, 6.f, 7.f, 10.f, 12.f, 1000.f})
    for (std::uint32_t b = 1; b < (1u << 23); b += b < 4096 ? 1 : stride) {
      float d;
      std::memcpy(&d, &b, sizeof d);
      const bool mid = check_division(d, n, midpoints);
      differ += mid && divide_by_count(d, n, count_reciprocal(n)) != d / n;
    }
  EXPECT_GT(midpoints, 1000u);
  EXPECT_GT(differ, 0u);
  RecordProperty("midpoints_that_differ", std::to_string(differ) + " of " + std::to_string(midpoints));
}

TYPED_TEST(WelfordDivision, InfinityGivesNanAndTheStepMatchesTheOracleAcrossTheLimit) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  EXPECT_TRUE(std::isnan(divide_by_count(inf, T(3), count_reciprocal(T(3)))));
  EXPECT_TRUE(std::isnan(divide_by_count(std::numeric_limits<T>::quiet_NaN(), T(3), count_reciprocal(T(3)))));
  EXPECT_EQ(divide_by_count(std::numeric_limits<T>::max(), T(1), T(1)), std::numeric_limits<T>::max());
  // Counts on both sides of the limit, where welford_step switches to a plain division: the same
  // bits as the oracle's Welford (tests/core/serial_moments.hpp) throughout.
  const T limit = kCountReciprocalLimit<T>;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> nd(7.0, 3.0);
  RowMoments<T> a{limit - T(3), T(7.25), T(1000)};
  WelfordAccumulator<T> w;
  w.state = MomentSummary<T>{a.n, a.mean, a.m2};
  for (int i = 0; i < 8; ++i) {
    const T x = static_cast<T>(nd(rng));
    a = welford_step(a, x);
    w.add(x);
    ASSERT_TRUE(same_bits(a.n, w.state.count) && same_bits(a.mean, w.state.mean) && same_bits(a.m2, w.state.m2)) << i;
  }
  EXPECT_GT(a.n, limit);
}

// The equal-count lane merge is the general merge re-associated: within rounding of it, and its
// bits do differ on some inputs (which is why welford_equal is a kernel of its own).
TYPED_TEST(RowChan, EqualCountMergeAgreesToRoundingButNotAlwaysInBits) {
  using T = TypeParam;
  const double u = unit_roundoff<T>();
  std::mt19937_64 rng(9);
  std::normal_distribution<double> nd(1e4, 1.0);
  int differ = 0;
  for (int trial = 0; trial < 500; ++trial) {
    RowMoments<T> a = moments_identity<T>(), b = moments_identity<T>();
    const int n = 1 + static_cast<int>(rng() % 64);
    for (int k = 0; k < n; ++k) a = welford_step(a, static_cast<T>(nd(rng)));
    for (int k = 0; k < n; ++k) b = welford_step(b, static_cast<T>(nd(rng)));
    const auto g = chan_merge(a, b), e = chan_merge_equal(a, b);
    EXPECT_EQ(g.n, e.n);
    EXPECT_TRUE(same_bits(g.mean, e.mean));  // mean_a + d * (nb/n) with nb/n = 0.5: same operations
    // m2: (A + B) + C vs A + (B + C), all >= 0: two roundings each side, <= 4u (A + B + C).
    const double tot = static_cast<double>(a.m2) + static_cast<double>(b.m2) + static_cast<double>(g.m2);
    EXPECT_LE(std::fabs(static_cast<double>(g.m2) - static_cast<double>(e.m2)), 4 * u * tot);
    differ += !same_bits(g.m2, e.m2);
  }
  EXPECT_GT(differ, 0);
}

// --- online softmax -------------------------------------------------------------------------------

template <class T> class RowSoftmax : public ::testing::Test {};
TYPED_TEST_SUITE(RowSoftmax, AccTypes);

// Associativity to rounding. One merge: l = l_a s_a + l_b s_b with s = exp(fl(m - M)): the
// argument rounds (absolute error u |m - M|, i.e. a relative error u |m - M| of s), exp and its
// rounding to T (< 2u: the float exp is < 0.79 ulp, the double one < 1 ulp), two products and the sum (3u), all
// terms positive: relative <= (5 + R) u with R = max_i (M - m_i). Two merges per grouping, the
// inner error carried through relatively: each grouping within 2 (5 + R) u, the two within
// 4 (5 + R) u of each other. The max is exact (no rounding), so m must agree exactly.
TYPED_TEST(RowSoftmax, MergeIsAssociativeToRoundingAndTheIdentityIsExact) {
  using T = TypeParam;
  const double u = unit_roundoff<T>();
  std::mt19937_64 rng(3);
  double worst = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    SoftmaxState<T> s[3];
    for (auto& st : s) {
      st = softmax_identity<T>();
      const double shift = std::normal_distribution<double>(0.0, 8.0)(rng);
      const double scale = 0.1 + static_cast<double>(rng() % 20);
      const int n = 1 + static_cast<int>(rng() % 100);
      for (int k = 0; k < n; ++k)
        st = online_softmax_step(st, static_cast<T>(shift + scale * std::normal_distribution<double>()(rng)));
    }
    const auto left = online_softmax_merge(online_softmax_merge(s[0], s[1]), s[2]);
    const auto right = online_softmax_merge(s[0], online_softmax_merge(s[1], s[2]));
    ASSERT_TRUE(same_bits(left.m, right.m));
    double R = 0;
    for (const auto& st : s) R = std::max(R, static_cast<double>(left.m) - static_cast<double>(st.m));
    const double tol = 4 * (5 + R) * u * std::max(static_cast<double>(left.l), static_cast<double>(right.l));
    const double d = std::fabs(static_cast<double>(left.l) - static_cast<double>(right.l));
    ASSERT_LE(d, tol) << "trial " << trial;
    worst = std::max(worst, d / tol);
    // Commutative bit for bit (one max, one commutative sum).
    const auto ab = online_softmax_merge(s[0], s[1]), ba = online_softmax_merge(s[1], s[0]);
    EXPECT_TRUE(same_bits(ab.m, ba.m) && same_bits(ab.l, ba.l));
    // The identity: exact on either side.
    const auto id = softmax_identity<T>();
    for (const auto& m : {online_softmax_merge(id, s[0]), online_softmax_merge(s[0], id)})
      EXPECT_TRUE(same_bits(m.m, s[0].m) && same_bits(m.l, s[0].l));
  }
  const auto id = softmax_identity<T>();
  const auto ii = online_softmax_merge(id, id);
  EXPECT_TRUE(same_bits(ii.m, id.m) && same_bits(ii.l, id.l));
  this->RecordProperty("worst_fraction_of_tolerance", std::to_string(worst));
}

// The online (m, l) of a row equals the exact one to rounding; the probabilities sum to 1.
TEST(RowSoftmax, OnlineAndThreePassAgreeToRoundingAndSumToOne) {
  const std::int64_t rows = 8, cols = 1000;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(3.0 * standard_normal(4, i));
  for (const auto& s : kShapes) {
    const auto a = model_rows<float>(RowKernel::softmax_online, s, std::span<const float>(x), rows, cols);
    const auto b = model_rows<float>(RowKernel::softmax_three_pass, s, std::span<const float>(x), rows, cols);
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      EXPECT_TRUE(same_bits(a.row_max[ri], b.row_max[ri]));
      // Each l is a sum of cols positive terms with < 2u exp errors: within (2 + cols) u each.
      EXPECT_NEAR(a.row_sum[ri], b.row_sum[ri], 2 * (2 + cols) * unit_roundoff<float>() * b.row_sum[ri]);
      double sum = 0;
      for (std::int64_t j = 0; j < cols; ++j) sum += a.out[static_cast<std::size_t>(r * cols + j)];
      EXPECT_NEAR(sum, 1.0, (4 + cols) * unit_roundoff<float>());
    }
  }
}

// The merge's one-exp form gives the bits of its definition (the side holding the max keeps its l,
// the other's is rescaled by exp(m - M) in one fma; equal maxima add), on maxima and sums that
// include the infinities, zero, NaN sums and ties.
TYPED_TEST(RowSoftmax, MergeGivesTheBitsOfItsDefinition) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T maxima[] = {-inf, T(-1e30), T(-100), T(-1), T(-0.0), T(0), T(0.5), T(1), T(87), T(100), inf};
  const T sums[] = {T(0), T(1), T(3.5), T(1e20), inf, nan};
  int checked = 0;
  for (T ma : maxima)
    for (T mb : maxima)
      for (T la : sums)
        for (T lb : sums) {
          const SoftmaxState<T> a{ma, la}, b{mb, lb};
          const T M = mb > ma ? mb : ma;
          const T sa = ma == M ? T(1) : acc_exp(ma - M), sb = mb == M ? T(1) : acc_exp(mb - M);
          const T l = ma == M && mb == M ? la + lb : mb == M ? std::fma(la, sa, lb) : std::fma(lb, sb, la);
          const SoftmaxState<T> want{M, l};
          const auto got = online_softmax_merge(a, b);
          ASSERT_TRUE(same_bits(got.m, want.m) && (same_bits(got.l, want.l) || (got.l != got.l && want.l != want.l)))
              << ma << " " << mb << " " << la << " " << lb;
          ++checked;
        }
  EXPECT_EQ(checked, 11 * 11 * 6 * 6);
}

TEST(RowSoftmax, SpecialsFollowTorchSemantics) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::int64_t cols = 40;
  // row 0: a NaN -> all NaN; row 1: +Inf -> all NaN; row 2: all -Inf -> all NaN;
  // row 3: -Inf entries among finite ones -> probability 0 there, the rest normal.
  std::vector<float> x(static_cast<std::size_t>(4 * cols));
  for (std::int64_t j = 0; j < cols; ++j) {
    const float v = static_cast<float>(j % 7) * 0.5f;
    x[static_cast<std::size_t>(j)] = j == 17 ? nan : v;
    x[static_cast<std::size_t>(cols + j)] = j == 5 ? inf : v;
    x[static_cast<std::size_t>(2 * cols + j)] = -inf;
    x[static_cast<std::size_t>(3 * cols + j)] = j % 3 == 0 ? -inf : v;
  }
  for (RowKernel k : kSoftmax)
    for (const auto& s : kShapes) {
      const auto o = model_rows<float>(k, s, std::span<const float>(x), 4, cols);
      for (std::int64_t j = 0; j < cols; ++j) {
        for (int r = 0; r < 3; ++r) EXPECT_TRUE(std::isnan(o.out[static_cast<std::size_t>(r * cols + j)])) << r << " " << j;
        const float p = o.out[static_cast<std::size_t>(3 * cols + j)];
        if (j % 3 == 0) {
          EXPECT_EQ(p, 0.0f);
        } else {
          EXPECT_TRUE(p > 0 && p < 1) << p;
        }
      }
      EXPECT_EQ(o.row_max[2], -inf);
      EXPECT_EQ(o.row_max[1], inf);
      EXPECT_TRUE(std::isnan(o.row_sum[0]));
    }
}

// --- argmax ---------------------------------------------------------------------------------------

TEST(RowArgmax, TiesGoToTheLowerIndexNanIsTheMaximumAndTheResultIsShapeInvariant) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::int64_t cols = 300;
  struct Row {
    std::vector<std::pair<std::int64_t, float>> planted;
    float fill;
    std::int64_t expected;
  };
  const Row rows[] = {
      {{{40, 5.f}, {7, 5.f}, {250, 5.f}}, 1.f, 7},      // ties: the first occurrence
      {{}, 2.f, 0},                                     // constant row
      {{{100, nan}, {30, nan}, {200, inf}}, 0.f, 30},   // the first NaN, NaN beats +Inf
      {{{299, inf}, {31, inf}}, -1.f, 31},              // +Inf ties
      {{}, -inf, 0},                                    // all -Inf
      {{{0, -0.f}, {1, 0.f}}, -0.f, 0},                 // +0 == -0: index 0
      {{{33, 7.f}}, -inf, 33},                          // one finite value among -Inf
  };
  const std::int64_t n = std::size(rows);
  std::vector<float> x(static_cast<std::size_t>(n * cols));
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t j = 0; j < cols; ++j) x[static_cast<std::size_t>(r * cols + j)] = rows[r].fill;
    for (const auto& [j, v] : rows[r].planted) x[static_cast<std::size_t>(r * cols + j)] = v;
  }
  RowOutputs<float> first;
  for (const auto& s : kShapes) {
    const auto o = model_rows<float>(RowKernel::argmax, s, std::span<const float>(x), n, cols);
    for (std::int64_t r = 0; r < n; ++r) EXPECT_EQ(o.max_index[static_cast<std::size_t>(r)], rows[r].expected) << r;
    EXPECT_TRUE(std::signbit(o.max_value[5]));  // the winner itself: -0 at index 0
    if (&s == &kShapes[0]) {
      first = o;
    } else {
      EXPECT_EQ(count_mismatches(o, first), 0);
    }
  }
  // Random rows: every shape picks the same element.
  std::vector<float> y(64 * 4097);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::round(static_cast<float>(standard_normal(8, i)) * 2.f);
  const auto ref = model_rows<float>(RowKernel::argmax, kShapes[0], std::span<const float>(y), 64, 4097);
  for (const auto& s : kShapes)
    EXPECT_EQ(count_mismatches(model_rows<float>(RowKernel::argmax, s, std::span<const float>(y), 64, 4097), ref), 0);
}

TEST(RowArgmax, MergeOrderIsTotal) {
  const float nan = std::nanf("");
  using S = ArgmaxState<float>;
  EXPECT_TRUE(argmax_better(S{nan, 9}, S{1e30f, 1}));
  EXPECT_FALSE(argmax_better(S{1e30f, 1}, S{nan, 9}));
  EXPECT_TRUE(argmax_better(S{nan, 3}, S{nan, 9}));
  EXPECT_TRUE(argmax_better(S{2.f, 9}, S{1.f, 1}));
  EXPECT_TRUE(argmax_better(S{1.f, 1}, S{1.f, 9}));
  EXPECT_FALSE(argmax_better(S{1.f, 9}, S{1.f, 1}));
  EXPECT_TRUE(argmax_better(S{-std::numeric_limits<float>::infinity(), 0}, argmax_identity<float>()));
  EXPECT_EQ(argmax_index(argmax_identity<float>().index), -1);
}

// The GPU thread's fold (a tree over each batch, then batch against best so far) must pick the
// element the plain fold picks, bit for bit, on inputs made of nothing but ties, NaNs of two
// payloads, infinities and signed zeros.
template <class V, int N> void expect_first_max_is_the_fold(std::uint64_t seed, int tuples) {
  const V nan = std::numeric_limits<V>::quiet_NaN(), inf = std::numeric_limits<V>::infinity();
  V nan2 = nan;
  unsigned char* b = reinterpret_cast<unsigned char*>(&nan2);
  b[0] ^= 1;  // another payload: which NaN wins must show
  const V alphabet[] = {nan, nan2, -inf, V(-1), V(-0.0), V(0), V(1), inf};
  for (int t = 0; t < tuples; ++t) {
    V x[N];
    ArgmaxState<V> fold = argmax_identity<V>();
    for (int u = 0; u < N; ++u) {
      const std::uint64_t k = random_bits(seed, std::uint64_t(t) * N + std::uint64_t(u), 0) % 8;
      x[u] = alphabet[k];
      fold = argmax_step(fold, x[u], u);
    }
    const ArgmaxState<V> tree = argmax_first_max(x);
    ASSERT_EQ(tree.index, fold.index) << "tuple " << t;
    ASSERT_EQ(std::memcmp(&tree.value, &fold.value, sizeof(V)), 0) << "tuple " << t;
    // The batch against a best so far from an earlier batch: the same as folding on.
    const V before = alphabet[random_bits(seed, std::uint64_t(t), 1) % 8];
    ArgmaxState<V> on{before, -1};
    for (int u = 0; u < N; ++u) on = argmax_step(on, x[u], u);
    const bool later = argmax_later_wins(tree.value, before);
    ASSERT_EQ(later ? tree.index : -1, on.index) << "tuple " << t;
  }
}

TEST(RowArgmax, TheThreadsBatchTreePicksTheFoldsElement) {
  expect_first_max_is_the_fold<float, 2>(21, 64);
  expect_first_max_is_the_fold<float, 4>(22, 20000);
  expect_first_max_is_the_fold<float, 8>(23, 200000);
  expect_first_max_is_the_fold<double, 8>(24, 200000);
  expect_first_max_is_the_fold<float, 16>(25, 100000);
}

// --- every kernel on empty rows, one-element rows, NaN and Inf -------------------------------------

TEST(RowModel, EmptyRowsAndOneElementRows) {
  const float nan = std::nanf("");
  (void)nan;
  for (const auto& s : kShapes) {
    const std::vector<float> none;
    for (const auto& i : row_kernels()) {
      const auto o = model_rows<float>(i.kernel, s, std::span<const float>(none), 3, 0);
      EXPECT_TRUE(o.out.empty());
      for (std::size_t r = 0; r < 3; ++r) {
        switch (i.family) {
          case RowFamily::moments:
            EXPECT_TRUE(std::isnan(o.mean[r]) && std::isnan(o.variance[r])) << i.name;
            break;
          case RowFamily::softmax:
            EXPECT_EQ(o.row_max[r], -std::numeric_limits<float>::infinity());
            EXPECT_EQ(o.row_sum[r], 0.0f);
            break;
          case RowFamily::argmax: EXPECT_EQ(o.max_index[r], -1); break;
        }
      }
      const auto z = model_rows<float>(i.kernel, s, std::span<const float>(none), 0, 17);
      EXPECT_TRUE(z.out.empty() && z.mean.empty() && z.max_index.empty());
    }
    const std::vector<float> one{1e4f + 0.375f, -2.5f};
    for (const auto& i : row_kernels()) {
      const auto o = model_rows<float>(i.kernel, s, std::span<const float>(one), 2, 1);
      for (std::size_t r = 0; r < 2; ++r) {
        switch (i.family) {
          case RowFamily::moments:
            EXPECT_EQ(o.mean[r], one[r]) << i.name;
            EXPECT_EQ(o.variance[r], 0.0f) << i.name;
            EXPECT_EQ(o.out[r], 0.0f) << i.name;
            break;
          case RowFamily::softmax:
            EXPECT_EQ(o.row_max[r], one[r]);
            EXPECT_EQ(o.row_sum[r], 1.0f);
            EXPECT_EQ(o.out[r], 1.0f);
            break;
          case RowFamily::argmax: EXPECT_EQ(o.max_index[r], 0); break;
        }
      }
    }
  }
}

TEST(RowModel, NanOrInfMakesTheVarianceAndTheOutputNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::int64_t cols = 100;
  std::vector<float> x(static_cast<std::size_t>(3 * cols), 1.5f);
  x[10] = std::nanf("");
  x[static_cast<std::size_t>(cols + 60)] = inf;
  x[static_cast<std::size_t>(2 * cols + 99)] = -inf;
  for (RowKernel k : kMoments)
    for (const auto& s : kShapes) {
      const auto o = model_rows<float>(k, s, std::span<const float>(x), 3, cols);
      for (std::size_t r = 0; r < 3; ++r) {
        EXPECT_TRUE(std::isnan(o.variance[r])) << info(k).name << " row " << r;
        for (std::int64_t j = 0; j < cols; ++j) EXPECT_TRUE(std::isnan(o.out[r * cols + static_cast<std::size_t>(j)]));
      }
    }
}

// --- the seeds' failure, through the kernels' order ------------------------------------------------

TEST(RowModel, TextbookGoesNegativeAtOffset1e4AndWelfordDoesNot) {
  const std::int64_t rows = 128, cols = 4096;
  const auto x = offset_rows<float>(rows, cols, 1e4, 1);
  for (const auto& s : {RowShape{RowLayout::warp_per_row, 256}, RowShape{RowLayout::block_per_row, 256}}) {
    const auto t = model_rows<float>(RowKernel::textbook, s, std::span<const float>(x), rows, cols);
    long negative = 0, nan_rows = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      negative += t.variance[static_cast<std::size_t>(r)] < 0;
      nan_rows += std::isnan(t.out[static_cast<std::size_t>(r * cols)]);
    }
    EXPECT_GT(negative, rows / 8) << to_string(s);
    EXPECT_EQ(nan_rows, negative);  // below -eps: rstd, hence the row, is NaN
    for (RowKernel k : {RowKernel::welford, RowKernel::welford_equal, RowKernel::two_pass}) {
      const auto w = model_rows<float>(k, s, std::span<const float>(x), rows, cols);
      for (std::int64_t r = 0; r < rows; ++r) {
        const float v = w.variance[static_cast<std::size_t>(r)];
        EXPECT_TRUE(v > 0.8f && v < 1.2f) << info(k).name << " " << v;
      }
    }
    RecordProperty("textbook_negative_rows_" + to_string(s), static_cast<int>(negative));
  }
}

// --- the model against an independent re-implementation --------------------------------------------

// Warp per row, written out directly: lane l folds Welford over columns l, l+32, ..; five XOR
// butterfly steps, every lane combining (own, partner) with the general merge written inline (or
// the seeds' equal-count lane code); lane 0's mean and m2/n; out = (x - mean) / sqrt(var + eps).
std::vector<float> direct_warp_welford(const std::vector<float>& x, std::int64_t rows, std::int64_t cols, bool equal,
                                       std::vector<float>& mean_out, std::vector<float>& var_out) {
  std::vector<float> out(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * cols;
    float cnt[32], mu[32], m2[32];
    for (int l = 0; l < 32; ++l) {
      cnt[l] = 0, mu[l] = 0, m2[l] = 0;
      for (std::int64_t j = l; j < cols; j += 32) {
        cnt[l] += 1.0f;
        const float d = row[j] - mu[l];
        mu[l] += d / cnt[l];
        m2[l] += d * (row[j] - mu[l]);
      }
    }
    for (int off = 16; off > 0; off >>= 1) {
      float c0[32], u0[32], q0[32];
      std::copy(cnt, cnt + 32, c0), std::copy(mu, mu + 32, u0), std::copy(m2, m2 + 32, q0);
      for (int l = 0; l < 32; ++l) {
        const int p = l ^ off;
        if (equal && c0[l] == c0[p] && c0[l] > 0) {  // the seeds' lane merge
          const float d = u0[p] - u0[l];
          mu[l] = u0[l] + 0.5f * d;
          m2[l] = q0[l] + (q0[p] + d * d * 0.5f * c0[l]);
          cnt[l] = 2.0f * c0[l];
        } else if (c0[l] == 0) {
          cnt[l] = c0[p], mu[l] = u0[p], m2[l] = q0[p];
        } else if (c0[p] != 0) {
          const float n = c0[l] + c0[p];
          const float d = u0[p] - u0[l];
          mu[l] = u0[l] + d * (c0[p] / n);
          m2[l] = (q0[l] + q0[p]) + d * d * (c0[l] * c0[p] / n);
          cnt[l] = n;
        }
      }
    }
    const float mean = cnt[0] == 0 ? std::nanf("") : mu[0];
    const float var = m2[0] / cnt[0];
    mean_out.push_back(mean);
    var_out.push_back(var);
    const float rstd = 1.0f / std::sqrt(var + static_cast<float>(1e-5));
    for (std::int64_t j = 0; j < cols; ++j) out[static_cast<std::size_t>(r * cols + j)] = (row[j] - mean) * rstd;
  }
  return out;
}

TEST(RowModel, WarpPerRowWelfordMatchesADirectReimplementationBitForBit) {
  for (std::int64_t cols : {0, 1, 31, 32, 33, 100, 4096, 4097}) {
    const std::int64_t rows = 9;
    const auto x = offset_rows<float>(rows, cols, 1e4, 2);
    for (bool equal : {false, true}) {
      std::vector<float> mean, var;
      const auto out = direct_warp_welford(x, rows, cols, equal, mean, var);
      const auto o = model_rows<float>(equal ? RowKernel::welford_equal : RowKernel::welford,
                                       RowShape{RowLayout::warp_per_row, 128}, std::span<const float>(x), rows, cols);
      for (std::int64_t r = 0; r < rows; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        EXPECT_TRUE(same_bits(o.mean[ri], mean[ri])) << cols << " " << equal;
        EXPECT_TRUE(same_bits(o.variance[ri], var[ri])) << cols << " " << equal;
      }
      for (std::size_t i = 0; i < out.size(); ++i) ASSERT_TRUE(same_bits(o.out[i], out[i])) << cols << " " << i;
    }
  }
}

// Layout and block size change the tree, hence the bits (run_to_run, not shape_invariant).
TEST(RowModel, TheShapeChangesTheBitsOfTheRoundedKernels) {
  const std::int64_t rows = 16, cols = 4096;
  const auto x = offset_rows<float>(rows, cols, 1e3, 3);
  for (RowKernel k : {RowKernel::textbook, RowKernel::welford, RowKernel::softmax_online}) {
    const auto a = model_rows<float>(k, kShapes[1], std::span<const float>(x), rows, cols, false);
    const auto b = model_rows<float>(k, kShapes[4], std::span<const float>(x), rows, cols, false);
    EXPECT_GT(count_mismatches(a, b), 0) << info(k).name;
  }
}

// bfloat16 input widens exactly: the model on bf16 bits equals the model on the widened floats.
TEST(RowModel, Bfloat16InputIsItsWidenedFloat) {
  const std::int64_t rows = 5, cols = 257;
  std::vector<bfloat16_bits> x(static_cast<std::size_t>(rows * cols));
  std::vector<float> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = to_bfloat16_bits(static_cast<float>(100.0 + 3.0 * standard_normal(6, i)));
    w[i] = RowInput<bfloat16_bits>::widen(x[i]);
    ASSERT_EQ(w[i], round_to_bfloat16(w[i]));
  }
  for (const auto& i : row_kernels())
    EXPECT_EQ(count_mismatches(model_rows<bfloat16_bits>(i.kernel, kShapes[3], std::span<const bfloat16_bits>(x), rows, cols),
                               model_rows<float>(i.kernel, kShapes[3], std::span<const float>(w), rows, cols)),
              0)
        << i.name;
}

TEST(RowModel, BadShapesAreRefusedWithASentence) {
  const std::vector<float> x(64, 1.0f);
  const std::span<const float> xs(x);
  auto message = [&](RowShape s, std::int64_t rows, std::int64_t cols) -> std::string {
    try {
      (void)model_rows<float>(RowKernel::welford, s, xs, rows, cols);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message({RowLayout::block_per_row, 48}, 2, 32).find("multiple of 32"), std::string::npos);
  EXPECT_NE(message({RowLayout::block_per_row, 2048}, 2, 32).find("32..1024"), std::string::npos);
  EXPECT_NE(message({RowLayout::warp_per_row, 0}, 2, 32).find("multiple of 32"), std::string::npos);
  EXPECT_NE(message({RowLayout::warp_per_row, 256}, 3, 32).find("elements for 3 x 32"), std::string::npos);
  EXPECT_NE(validate_row_shape(RowKernel::textbook, {}, "float32", 1, (std::int64_t(1) << 24) + 1).find("2^24"),
            std::string::npos);
  EXPECT_EQ(validate_row_shape(RowKernel::textbook, {}, "float64", 1, (std::int64_t(1) << 24) + 1), "");
  EXPECT_NE(validate_row_shape(RowKernel::textbook, {}, "float32", -1, 4).find(">= 0"), std::string::npos);
  EXPECT_NE(validate_row_shape(RowKernel::textbook, {}, "float16", 1, 4).find("dtype"), std::string::npos);
}

}  // namespace
}  // namespace sumlab::row_reduce
