// reference/segment_sums: per-segment exact sums against correctly_rounded_sum of each slice,
// empty segments, every offset type, and offset validation naming the first bad position.
#include "reference/segment_sums.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/float_traits.hpp"
#include "reference/mpfr_sum.hpp"

namespace {

using sumlab::reference::correctly_rounded_sum;
using sumlab::reference::exact_segment_sums;
using sumlab::reference::validate_offsets;

template <class T, class O> std::vector<T> seg(const std::vector<T>& v, const std::vector<O>& o) {
  return exact_segment_sums<T, O>(std::span<const T>(v), std::span<const O>(o));
}

TEST(SegmentSums, HandMade) {
  const float h = std::ldexp(1.0f, -24);
  const std::vector<float> v{1.0f, h, std::ldexp(1.0f, -40), 1.0f, h, -0.0f, 5.0f};
  // Segments: {1, h, 2^-40} -> 1 + 2^-23; {} -> +0; {1, h} -> 1 (tie to even); {-0} -> -0; {5}.
  const auto s = seg<float, std::int32_t>(v, {0, 3, 3, 5, 6, 7});
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0], 1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(sumlab::to_bits(s[1]), sumlab::to_bits(0.0f));
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_EQ(sumlab::to_bits(s[3]), sumlab::to_bits(-0.0f));
  EXPECT_EQ(s[4], 5.0f);
  // No segments at all: offsets {0} with no values.
  EXPECT_TRUE((seg<double, std::uint64_t>({}, {0}).empty()));
  // One segment of everything equals the whole sum.
  EXPECT_EQ((seg<float, std::int64_t>(v, {0, 7})[0]), correctly_rounded_sum<float>(v));
}

template <class T, class O> void check_random(std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1e3);
  std::vector<T> v(1000);
  for (auto& e : v) e = T(g(rng)) * T(std::ldexp(1.0, int(rng() % 40) - 20));
  std::vector<O> off{0};
  while (std::size_t(off.back()) < v.size()) {
    const std::size_t len = rng() % 40;  // includes empty segments
    off.push_back(O(std::min(v.size(), std::size_t(off.back()) + len)));
  }
  const auto s = seg<T, O>(v, off);
  ASSERT_EQ(s.size(), off.size() - 1);
  for (std::size_t j = 0; j + 1 < off.size(); ++j) {
    const std::span<const T> part(v.data() + off[j], std::size_t(off[j + 1] - off[j]));
    EXPECT_EQ(sumlab::to_bits(s[j]), sumlab::to_bits(correctly_rounded_sum<T>(part))) << j;
  }
}

TEST(SegmentSums, MatchesWholeSumPerSliceForEveryOffsetType) {
  std::mt19937_64 rng(9);
  check_random<float, std::int32_t>(rng);
  check_random<float, std::uint32_t>(rng);
  check_random<double, std::int64_t>(rng);
  check_random<double, std::uint64_t>(rng);
  check_random<double, std::size_t>(rng);
}

std::string message_of(const std::vector<std::int64_t>& off, std::size_t n) {
  try {
    validate_offsets<std::int64_t>(off, n);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SegmentSums, ValidationNamesTheFirstBadPosition) {
  EXPECT_EQ(message_of({0, 2, 4}, 4), "");
  EXPECT_NE(message_of({}, 0).find("empty"), std::string::npos);
  EXPECT_NE(message_of({1, 2, 4}, 4).find("position 0 (value 1)"), std::string::npos);
  EXPECT_NE(message_of({0, 3, 2, 4}, 4).find("position 2 (value 2)"), std::string::npos);
  EXPECT_NE(message_of({0, 3, 2, 4}, 4).find("non-decreasing"), std::string::npos);
  EXPECT_NE(message_of({0, 9, 2, 4}, 4).find("position 1 (value 9)"), std::string::npos);
  EXPECT_NE(message_of({0, 2, 3}, 4).find("position 2 (value 3)"), std::string::npos);
  EXPECT_NE(message_of({0, -1, 4}, 4).find("position 1 (value -1)"), std::string::npos);
  const std::vector<float> v(4, 1.0f);
  EXPECT_THROW((seg<float, std::int32_t>(v, {0, 2, 3})), std::invalid_argument);
}

// The reference calls the one validator of core/segmented/offsets.hpp with the offset type's own
// limit: offsets computed in int32 that wrapped, and more values than int32 offsets can index,
// are named as index-type overflows at their first position.
TEST(SegmentSums, ValidationNamesIndexTypeOverflow) {
  auto message32 = [](const std::vector<std::int32_t>& off, std::size_t n) -> std::string {
    try {
      validate_offsets<std::int32_t>(off, n);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  const std::string wrapped = message32({0, 2'000'000'000, -2'094'967'296}, 3'000'000'000u);
  EXPECT_NE(wrapped.find("position 2 (value -2094967296)"), std::string::npos) << wrapped;
  EXPECT_NE(wrapped.find("index type overflow"), std::string::npos) << wrapped;
  const std::size_t n = std::size_t{1} << 31;  // one more value than int32 can index
  const std::string big = message32({0, 2'147'483'647}, n);
  EXPECT_NE(big.find("position 1 (value 2147483647)"), std::string::npos) << big;
  EXPECT_NE(big.find("overflows the index type (largest index 2147483647)"), std::string::npos) << big;
  // The same layout in int64 is fine as far as the index type goes (only n is wrong).
  EXPECT_EQ(message_of({0, 4}, 4), "");
  EXPECT_EQ(message_of({0, 2'147'483'648LL}, n), "");
}

}  // namespace
