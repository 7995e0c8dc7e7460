#pragma once
// CSR offsets of a segmented array, and their validation: the one validator of the lab
// (reference/segment_sums.hpp, the GPU launchers and the studies all call this one).
//
// Segment j is values[offsets[j] : offsets[j+1]] (half-open) for j = 0 .. offsets.size() - 2, so
// offsets has one more entry than there are segments; an empty segment has equal consecutive
// offsets; no segments at all is offsets == {0} with no values.
// Valid offsets: at least one entry, offsets[0] == 0, non-decreasing, every entry <= n, the last
// == n, and every entry (and n) representable by the index type the consumer uses: `index_max`,
// by default the largest value of Offset itself (a GPU kernel or library call that indexes with
// 32 bits passes INT32_MAX, so offsets that would overflow its index are refused up front instead
// of wrapping inside the kernel).
// Each check names the FIRST bad position and its value, in one sentence.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace sumlab::segmented {

// Offsets on the host are 64-bit: n may exceed 2^31 on a 141 GB GPU.
using Offset = std::int64_t;

template <class O>
void validate_offsets(std::span<const O> offsets, std::size_t n,
                      std::uint64_t index_max = static_cast<std::uint64_t>(std::numeric_limits<O>::max())) {
  static_assert(std::is_integral_v<O>, "offsets are integers");
  if (offsets.empty())
    throw std::invalid_argument("segment offsets: empty (need at least {0, n}, or {0} when n = 0)");
  auto bad = [&](std::size_t j, const std::string& why) {
    throw std::invalid_argument("segment offsets: position " + std::to_string(j) + " (value " +
                                std::to_string(offsets[j]) + ") " + why);
  };
  if (offsets[0] != 0) bad(0, "must be 0");
  for (std::size_t j = 1; j < offsets.size(); ++j) {
    if (offsets[j] < offsets[j - 1]) {
      // A negative entry after a large one is the signature of an offset computed in a narrower
      // type that wrapped around.
      const bool wrapped = std::is_signed_v<O> && offsets[j] < 0;
      bad(j, "is less than position " + std::to_string(j - 1) + " (value " + std::to_string(offsets[j - 1]) +
                 "): offsets must be non-decreasing" +
                 (wrapped ? " (a negative offset: did the index type overflow?)" : ""));
    }
    if (static_cast<std::uint64_t>(offsets[j]) > index_max)
      bad(j, "overflows the index type (largest index " + std::to_string(index_max) + ")");
    if (static_cast<std::uint64_t>(offsets[j]) > n) bad(j, "exceeds the number of values " + std::to_string(n));
  }
  if (static_cast<std::uint64_t>(offsets.back()) != n) {
    const std::string why = static_cast<std::uint64_t>(n) > index_max
                                ? "is the last offset and must equal the number of values " + std::to_string(n) +
                                      ", which overflows the index type (largest index " +
                                      std::to_string(index_max) + ")"
                                : "is the last offset and must equal the number of values " + std::to_string(n);
    bad(offsets.size() - 1, why);
  }
}

}  // namespace sumlab::segmented
