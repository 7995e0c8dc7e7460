#pragma once
// Segment-size distributions: the size of segment j is a pure function of (kind, seed, j, spec),
// like every input generator of the lab (core/generators.hpp), so a study, a test and a GPU run
// build the same offsets from the same three numbers. Offsets are the exclusive prefix sums of
// the sizes (make_offsets).
//
// Every kind has expected total n ~= segments * mean (one_giant: exactly half of it in the giant):
//   uniform     size uniform in [0, 2 * mean]: a few empty segments, mild imbalance;
//   power_law   Pareto, alpha = 1.5, size = floor(xm * u^(-1/alpha)) with xm = (mean + 1) / 3 so the
//               mean is about `mean`, capped at 64 (mean + 1) sqrt(segments): heavy tail, most segments
//               small and a few large ones (tokens per expert, node degrees);
//   many_empty  3 of 4 segments empty, the others uniform in [1, 8 * mean - 1];
//   one_giant   one segment (index picked by the seed) of segments * mean / 2 elements, the others
//               uniform in [0, mean]: the load imbalance that breaks block_per_segment, and the
//               large segment before small ones that breaks prefix_difference.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/segmented/offsets.hpp"

namespace sumlab::segmented {

enum class SizeDistribution { uniform, power_law, many_empty, one_giant };

inline constexpr std::array<SizeDistribution, 4> kAllSizeDistributions{
    SizeDistribution::uniform, SizeDistribution::power_law, SizeDistribution::many_empty,
    SizeDistribution::one_giant};

std::string_view to_string(SizeDistribution d);
std::string_view describe(SizeDistribution d);
// Throws std::invalid_argument naming the valid names.
SizeDistribution parse_size_distribution(std::string_view name);

struct SizeSpec {
  SizeDistribution kind = SizeDistribution::uniform;
  std::int64_t segments = 0;  // >= 0
  double mean = 16;           // expected elements per segment, >= 0
};

// The size of segment j (0 <= j < segments).
std::int64_t segment_size(const SizeSpec& spec, std::uint64_t seed, std::int64_t j);

// {0, s_0, s_0 + s_1, ...}: segments + 1 entries. Throws std::invalid_argument for a negative
// count or mean, or when the total would overflow int64.
std::vector<Offset> make_offsets(const SizeSpec& spec, std::uint64_t seed);

}  // namespace sumlab::segmented
