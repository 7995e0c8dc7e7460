// Segment sizes from counter-based random numbers (core/counter_rng.hpp): integer hashing and
// double arithmetic only, so the sizes are the same everywhere.
#include "core/segmented/segment_sizes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/counter_rng.hpp"

namespace sumlab::segmented {

namespace {
// Streams of counter_rng, distinct from the value generators' (core/generators.hpp uses 0..260).
constexpr std::uint32_t size_stream = 700;
constexpr std::uint32_t giant_stream = 701;
constexpr std::uint32_t empty_stream = 702;
}  // namespace

std::string_view to_string(SizeDistribution d) {
  switch (d) {
    case SizeDistribution::uniform: return "uniform";
    case SizeDistribution::power_law: return "power_law";
    case SizeDistribution::many_empty: return "many_empty";
    case SizeDistribution::one_giant: return "one_giant";
  }
  return "?";
}

std::string_view describe(SizeDistribution d) {
  switch (d) {
    case SizeDistribution::uniform: return "sizes uniform in [0, 2 mean]";
    case SizeDistribution::power_law: return "Pareto sizes (alpha 1.5): many small segments, a heavy tail";
    case SizeDistribution::many_empty: return "3 of 4 segments empty, the rest uniform in [1, 8 mean - 1]";
    case SizeDistribution::one_giant: return "one segment holds half the elements, the others uniform in [0, mean]";
  }
  return "?";
}

SizeDistribution parse_size_distribution(std::string_view name) {
  for (SizeDistribution d : kAllSizeDistributions)
    if (to_string(d) == name) return d;
  throw std::invalid_argument("unknown segment-size distribution '" + std::string(name) +
                              "' (valid: uniform, power_law, many_empty, one_giant)");
}

std::int64_t segment_size(const SizeSpec& spec, std::uint64_t seed, std::int64_t j) {
  const auto uj = static_cast<std::uint64_t>(j);
  const double u = uniform_double(seed, uj, size_stream);  // [0, 1)
  const double m = spec.mean;
  switch (spec.kind) {
    case SizeDistribution::uniform:
      return static_cast<std::int64_t>(std::floor(u * (2.0 * std::floor(m) + 1.0)));
    case SizeDistribution::power_law: {
      // Pareto(xm, 1.5) has mean 3 xm = m + 1; the floor takes about a half off.
      const double alpha = 1.5, xm = (m + 1.0) / 3.0;
      const double cap = 64.0 * (m + 1.0) * std::sqrt(static_cast<double>(std::max<std::int64_t>(spec.segments, 1)));
      const double x = xm * std::pow(1.0 - u, -1.0 / alpha);  // 1 - u in (0, 1]
      return static_cast<std::int64_t>(std::floor(std::min(x, cap)));
    }
    case SizeDistribution::many_empty: {
      if (random_bits(seed, uj, empty_stream) % 4 != 0) return 0;
      const double hi = std::max(1.0, 8.0 * m - 1.0);
      return 1 + static_cast<std::int64_t>(std::floor(u * hi));
    }
    case SizeDistribution::one_giant: {
      const auto giant = static_cast<std::int64_t>(
          random_bits(seed, 0, giant_stream) % static_cast<std::uint64_t>(std::max<std::int64_t>(spec.segments, 1)));
      if (j == giant) return static_cast<std::int64_t>(std::floor(static_cast<double>(spec.segments) * m / 2.0));
      return static_cast<std::int64_t>(std::floor(u * (std::floor(m) + 1.0)));
    }
  }
  return 0;
}

std::vector<Offset> make_offsets(const SizeSpec& spec, std::uint64_t seed) {
  if (spec.segments < 0) throw std::invalid_argument("segments must be >= 0, got " + std::to_string(spec.segments));
  if (!(spec.mean >= 0) || !std::isfinite(spec.mean))
    throw std::invalid_argument("mean segment size must be finite and >= 0");
  std::vector<Offset> off(static_cast<std::size_t>(spec.segments) + 1, 0);
  for (std::int64_t j = 0; j < spec.segments; ++j) {
    const std::int64_t s = segment_size(spec, seed, j);
    if (off[static_cast<std::size_t>(j)] > std::numeric_limits<Offset>::max() - s)
      throw std::invalid_argument("segment " + std::to_string(j) + ": the total size overflows int64");
    off[static_cast<std::size_t>(j) + 1] = off[static_cast<std::size_t>(j)] + s;
  }
  return off;
}

}  // namespace sumlab::segmented
