// core/segmented: hand-built segment layouts (empty first, middle and last segments, one segment,
// all empty, none), the two pitfalls failing in exactly the documented way, the GPU strategies'
// models against the exact reference where exactness is guaranteed (integer-valued inputs) and
// against the documented bound elsewhere, the size generators, and the offset validator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/float_traits.hpp"
#include "core/segmented/cpu_segmented.hpp"
#include "core/segmented/offsets.hpp"
#include "core/segmented/segment_sizes.hpp"
#include "core/segmented/segmented_model.hpp"
#include "core/segmented/strategy.hpp"
#include "reference/mpfr_sum.hpp"
#include "reference/segment_sums.hpp"

namespace sumlab::segmented {
namespace {

// Every strategy that runs on the CPU here (the CPU algorithms and every modelled GPU strategy
// under several shapes), by label.
template <class T> struct Run {
  std::string label;
  std::vector<T> sums;
};

const SegShape kModelShapes[] = {{32, 1}, {64, 3}, {96, 1}, {256, 4}, {1024, 2}};

template <class T> std::vector<Run<T>> all_correct(const std::vector<T>& x, const std::vector<Offset>& off) {
  std::vector<Run<T>> r;
  r.push_back({"serial_per_segment", serial_per_segment<T>(x, off)});
  for (const auto& i : strategies()) {
    if (i.where != Where::gpu_modelled) continue;
    for (const SegShape& s : kModelShapes)
      r.push_back({std::string(i.name) + " " + to_string(s, i.strategy), model_segmented<T>(i.strategy, s, x, off)});
  }
  return r;
}

template <class T> std::vector<T> exact(const std::vector<T>& x, const std::vector<Offset>& off) {
  return reference::exact_segment_sums<T, Offset>(x, off);
}

template <class T> class SegmentedTyped : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SegmentedTyped, Types);

TYPED_TEST(SegmentedTyped, HandBuiltLayoutsAreExactOnSmallIntegers) {
  using T = TypeParam;
  struct Case {
    const char* name;
    std::vector<Offset> off;
  };
  // n = 10 values 1..10 (sums of small integers are exact in any order).
  const std::vector<T> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<Case> cases = {
      {"empty first", {0, 0, 4, 10}},
      {"empty middle", {0, 4, 4, 4, 10}},
      {"empty last", {0, 4, 10, 10}},
      {"empty first, middle and last", {0, 0, 3, 3, 10, 10}},
      {"one segment", {0, 10}},
      {"singletons", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
  };
  for (const auto& c : cases) {
    const auto want = exact(x, c.off);
    for (const auto& run : all_correct(x, c.off)) {
      ASSERT_EQ(run.sums.size(), c.off.size() - 1) << c.name << " " << run.label;
      for (std::size_t j = 0; j < want.size(); ++j)
        EXPECT_EQ(to_bits(run.sums[j]), to_bits(want[j])) << c.name << " " << run.label << " segment " << j;
    }
  }
  // All empty: no values, three segments; and no segments at all.
  const std::vector<T> none;
  for (const auto& run : all_correct<T>(none, {0, 0, 0, 0})) {
    ASSERT_EQ(run.sums.size(), 3u) << run.label;
    for (T v : run.sums) EXPECT_EQ(to_bits(v), to_bits(T(0))) << run.label << ": an empty segment is +0";
  }
  for (const auto& run : all_correct<T>(none, {0})) EXPECT_TRUE(run.sums.empty()) << run.label;
  // All empty but values exist is invalid (the last offset must be n).
  EXPECT_THROW(serial_per_segment<T>(x, std::vector<Offset>{0, 0, 0}), std::invalid_argument);
}

TYPED_TEST(SegmentedTyped, PrefixDifferenceLosesASmallSegmentAfterAGiantOne) {
  using T = TypeParam;
  constexpr int digits = std::numeric_limits<T>::digits;
  // 4096 elements of 2^(p-13): the running prefix reaches 2^(p-1), where ulp = 1, so each 0.25 of
  // the next segment rounds away (0.25 < ulp/2) and c_{end} - c_{begin} = 0.
  const T big = std::ldexp(T(1), digits - 13);
  std::vector<T> x(4096, big);
  for (int i = 0; i < 3; ++i) x.push_back(T(0.25));
  const std::vector<Offset> off{0, 4096, 4096, 4099};
  const auto want = exact(x, off);
  ASSERT_EQ(want[2], T(0.75));
  const auto wrong = prefix_difference<T>(x, off);
  EXPECT_EQ(wrong[2], T(0)) << "the small segment vanished into the prefix's rounding";
  EXPECT_EQ(wrong[0], want[0]) << "the giant segment itself is exact here";
  EXPECT_EQ(to_bits(wrong[1]), to_bits(T(0))) << "an empty segment differences to +0";
  for (const auto& run : all_correct(x, off)) EXPECT_EQ(run.sums[2], T(0.75)) << run.label;
  // The same small segment BEFORE the giant one is exact: the error comes from the prefix mass.
  std::vector<T> y{T(0.25), T(0.25), T(0.25)};
  y.insert(y.end(), 4096, big);
  EXPECT_EQ((prefix_difference<T>(y, std::vector<Offset>{0, 3, 4099})[0]), T(0.75));
}

TYPED_TEST(SegmentedTyped, ReduceatReturnsTheNextElementForAnEmptySegment) {
  using T = TypeParam;
  const std::vector<T> x{1, 2, 30, 40, 500};
  const std::vector<Offset> off{0, 2, 2, 4, 5};  // segment 1 is empty; the next element is x[2] = 30
  const auto got = reduceat<T>(x, off);
  EXPECT_EQ(got[0], T(3));
  EXPECT_EQ(got[1], T(30)) << "numpy.add.reduceat's rule: an empty segment yields x[start]";
  EXPECT_EQ(got[2], T(70));
  EXPECT_EQ(got[3], T(500));
  EXPECT_EQ(to_bits(serial_per_segment<T>(x, off)[1]), to_bits(T(0)));
  // An empty last segment starts at n: numpy raises IndexError; ours says NaN.
  const auto tail = reduceat<T>(x, std::vector<Offset>{0, 5, 5});
  EXPECT_EQ(tail[0], T(573));
  EXPECT_TRUE(std::isnan(tail[1]));
}

// Integer-valued random inputs (|x| <= 2^10, segments <= 2^14 elements: every partial sum is an
// integer below 2^22 < 2^24, so every order is exact) over every size distribution and segment
// lengths around the warp and block widths.
TYPED_TEST(SegmentedTyped, ModelsAreExactOnIntegersForEverySizeDistribution) {
  using T = TypeParam;
  for (SizeDistribution d : kAllSizeDistributions) {
    const SizeSpec spec{d, 60, 40};
    const std::vector<Offset> off = make_offsets(spec, 5);
    std::vector<T> x(static_cast<std::size_t>(off.back()));
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = T(static_cast<int>(random_bits(3, i, 0) % 2049) - 1024);
    const auto want = exact(x, off);
    for (const auto& run : all_correct(x, off))
      for (std::size_t j = 0; j < want.size(); ++j)
        ASSERT_EQ(to_bits(run.sums[j]), to_bits(want[j])) << to_string(d) << " " << run.label << " segment " << j;
  }
  std::vector<Offset> off{0};
  for (Offset len : {0, 1, 31, 32, 33, 0, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 0, 3000})
    off.push_back(off.back() + len);
  std::vector<T> x(static_cast<std::size_t>(off.back()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = T(static_cast<int>(random_bits(4, i, 0) % 2049) - 1024);
  const auto want = exact(x, off);
  for (const auto& run : all_correct(x, off))
    for (std::size_t j = 0; j < want.size(); ++j)
      ASSERT_EQ(to_bits(run.sums[j]), to_bits(want[j])) << run.label << " segment " << j;
}

// Any order of m - 1 additions satisfies |computed - exact| <= gamma_{m-1} sum |x_i| (Higham,
// Lemma 3.1 generalised to any tree: every element passes through at most m - 1 roundings). The
// models must stay inside it on random floats; prefix_difference need not and does not.
TYPED_TEST(SegmentedTyped, ModelsStayWithinTheOrderFreeBound) {
  using T = TypeParam;
  const SizeSpec spec{SizeDistribution::one_giant, 40, 200};
  const std::vector<Offset> off = make_offsets(spec, 11);
  std::vector<T> x(static_cast<std::size_t>(off.back()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = T(uniform_double(7, i, 0));  // [0, 1): no cancellation
  const auto want = exact(x, off);
  for (const auto& run : all_correct(x, off))
    for (std::size_t j = 0; j + 1 < off.size(); ++j) {
      const auto m = off[j + 1] - off[j];
      if (m < 2) continue;
      std::vector<T> a(x.begin() + off[j], x.begin() + off[j + 1]);
      const double sum_abs = static_cast<double>(reference::correctly_rounded_sum<T>(a));  // x >= 0
      const double bound = gamma<T>(double(m - 1)) * sum_abs * (1 + 4 * unit_roundoff<T>());
      EXPECT_LE(std::fabs(static_cast<double>(run.sums[j]) - static_cast<double>(want[j])), bound)
          << run.label << " segment " << j;
    }
}

TEST(SegmentedModels, BlockOf32IsTheWarpTreeAndWarpPerSegmentIgnoresTheBlock) {
  const SizeSpec spec{SizeDistribution::power_law, 200, 50};
  const auto off = make_offsets(spec, 2);
  std::vector<float> x(static_cast<std::size_t>(off.back()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(uniform_double(9, i, 0) - 0.5);
  const auto warp = model_segmented<float>(Strategy::warp_per_segment, {256, 1}, x, off);
  // One warp's warp_of_warps stage adds +0 to the warp total five times: the same bits.
  const auto block32 = model_segmented<float>(Strategy::block_per_segment, {32, 1}, x, off);
  for (std::size_t j = 0; j < warp.size(); ++j) EXPECT_EQ(to_bits(warp[j]), to_bits(block32[j])) << j;
  EXPECT_EQ(model_segmented<float>(Strategy::warp_per_segment, {32, 1}, x, off), warp);
  // And the shape does change block_per_segment's and the scan's bits somewhere (run_to_run).
  const auto block256 = model_segmented<float>(Strategy::block_per_segment, {256, 1}, x, off);
  const auto scan_a = model_segmented<float>(Strategy::segmented_scan, {64, 1}, x, off);
  const auto scan_b = model_segmented<float>(Strategy::segmented_scan, {256, 8}, x, off);
  EXPECT_NE(block256, block32);
  EXPECT_NE(scan_a, scan_b);
}

TEST(SegmentedModels, RefuseBadShapesAndUnmodelledStrategies) {
  const std::vector<float> x{1, 2};
  const std::vector<Offset> off{0, 2};
  EXPECT_THROW(model_segmented<float>(Strategy::block_per_segment, {48, 1}, x, off), std::invalid_argument);
  EXPECT_THROW(model_segmented<float>(Strategy::segmented_scan, {64, 5}, x, off), std::invalid_argument);
  EXPECT_THROW(model_segmented<float>(Strategy::cub_reduce_by_key, {64, 1}, x, off), std::invalid_argument);
  EXPECT_THROW(model_segmented<float>(Strategy::block_per_segment, {64, 1}, x, std::vector<Offset>{0, 3}),
               std::invalid_argument);
}

TEST(SegmentSizes, PureFunctionsOfSeedAndIndexWithTheDocumentedShape) {
  for (SizeDistribution d : kAllSizeDistributions) {
    EXPECT_EQ(parse_size_distribution(to_string(d)), d);
    const SizeSpec spec{d, 4000, 16};
    const auto a = make_offsets(spec, 3), b = make_offsets(spec, 3), c = make_offsets(spec, 4);
    EXPECT_EQ(a, b) << to_string(d);
    EXPECT_NE(a, c) << to_string(d);
    EXPECT_EQ(a.size(), 4001u);
    validate_offsets<Offset>(a, static_cast<std::size_t>(a.back()));
    // Expected total segments * mean: within 15 % for 4000 segments (power_law's tail is capped).
    EXPECT_NEAR(double(a.back()), 4000.0 * 16, 0.15 * 4000 * 16) << to_string(d);
    EXPECT_EQ(segment_size(spec, 3, 17), a[18] - a[17]);
  }
  const auto me = make_offsets({SizeDistribution::many_empty, 4000, 16}, 1);
  int empty = 0;
  for (std::size_t j = 0; j + 1 < me.size(); ++j) empty += me[j] == me[j + 1];
  EXPECT_GT(empty, 2800);
  EXPECT_LT(empty, 3200);
  const auto og = make_offsets({SizeDistribution::one_giant, 4000, 16}, 1);
  int giants = 0;
  for (std::size_t j = 0; j + 1 < og.size(); ++j) giants += og[j + 1] - og[j] == 32000;
  EXPECT_EQ(giants, 1);
  EXPECT_THROW(parse_size_distribution("zipf"), std::invalid_argument);
  EXPECT_THROW(make_offsets({SizeDistribution::uniform, -1, 16}, 1), std::invalid_argument);
}

std::string message(const std::vector<std::int32_t>& off, std::size_t n, std::uint64_t index_max) {
  try {
    validate_offsets<std::int32_t>(off, n, index_max);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SegmentOffsets, OverflowOfTheIndexTypeNamesThePosition) {
  EXPECT_EQ(message({0, 5, 9}, 9, 100), "");
  // A consumer with a smaller index (e.g. 8-bit here) refuses the first entry beyond it.
  EXPECT_NE(message({0, 100, 300, 300}, 300, 255).find("position 2 (value 300) overflows the index type"),
            std::string::npos);
  // int32 offsets that wrapped past 2^31 - 1 go negative: named, with the likely cause.
  // (3e9 values: the true offsets 2e9 and 2.2e9, the second wrapped in int32.)
  const std::string wrapped = message({0, 2'000'000'000, -2'094'967'296}, 3'000'000'000u, 2'147'483'647);
  EXPECT_NE(wrapped.find("position 2"), std::string::npos) << wrapped;
  EXPECT_NE(wrapped.find("did the index type overflow"), std::string::npos) << wrapped;
  // n itself beyond the index type: the last offset cannot reach it.
  const std::string big = message({0, 2'147'483'647}, std::size_t{1} << 31, 2'147'483'647);
  EXPECT_NE(big.find("overflows the index type"), std::string::npos) << big;
  EXPECT_NE(big.find("position 1"), std::string::npos) << big;
}

TEST(SegmentStrategies, RegistryNamesRoundTrip) {
  for (const auto& i : strategies()) {
    ASSERT_TRUE(find_strategy(i.name).has_value());
    EXPECT_EQ(*find_strategy(i.name), i.strategy);
    EXPECT_FALSE(i.description.empty());
  }
  EXPECT_FALSE(find_strategy("atomic_per_segment").has_value());
  EXPECT_TRUE(info(Strategy::prefix_difference).known_wrong);
  EXPECT_TRUE(info(Strategy::reduceat).known_wrong);
  EXPECT_EQ(info(Strategy::cub_segmented_reduce).where, Where::gpu_peer);
  EXPECT_EQ(info(Strategy::cub_scan_by_key).where, Where::gpu_peer);
  EXPECT_EQ(info(Strategy::cub_scan_by_key).determinism, sumlab::Determinism::not_deterministic);
}

}  // namespace
}  // namespace sumlab::segmented
