// Exact segment sums: validate the CSR offsets, then one correctly rounded exact sum per segment.
#include "reference/segment_sums.hpp"

#include <stdexcept>
#include <string>

#include "reference/mpfr_sum.hpp"

namespace sumlab::reference {

template <class Offset> void validate_offsets(std::span<const Offset> offsets, std::size_t n) {
  if (offsets.empty()) {
    throw std::invalid_argument("segment offsets: empty (need at least {0, n}, or {0} when n = 0)");
  }
  auto bad = [&](std::size_t j, const std::string& why) {
    throw std::invalid_argument("segment offsets: position " + std::to_string(j) + " (value " +
                                std::to_string(offsets[j]) + ") " + why);
  };
  if (offsets[0] != 0) bad(0, "must be 0");
  for (std::size_t j = 1; j < offsets.size(); ++j) {
    if (offsets[j] < offsets[j - 1]) {
      bad(j, "is less than position " + std::to_string(j - 1) + " (value " +
                 std::to_string(offsets[j - 1]) + "): offsets must be non-decreasing");
    }
    if (static_cast<std::uint64_t>(offsets[j]) > n) {
      bad(j, "exceeds the number of values " + std::to_string(n));
    }
  }
  if (static_cast<std::uint64_t>(offsets.back()) != n) {
    bad(offsets.size() - 1, "is the last offset and must equal the number of values " +
                                std::to_string(n));
  }
}

template <class T, class Offset>
std::vector<T> exact_segment_sums(std::span<const T> values, std::span<const Offset> offsets) {
  validate_offsets(offsets, values.size());
  std::vector<T> sums(offsets.size() - 1);
  for (std::size_t j = 0; j + 1 < offsets.size(); ++j) {
    const auto begin = static_cast<std::size_t>(offsets[j]);
    const auto end = static_cast<std::size_t>(offsets[j + 1]);
    sums[j] = correctly_rounded_sum<T>(values.subspan(begin, end - begin));
  }
  return sums;
}

#define SUMLAB_SEGMENT_SUMS(T, Offset)                                                          \
  template std::vector<T> exact_segment_sums<T, Offset>(std::span<const T>,                    \
                                                        std::span<const Offset>);
SUMLAB_SEGMENT_SUMS(float, std::int32_t)
SUMLAB_SEGMENT_SUMS(float, std::int64_t)
SUMLAB_SEGMENT_SUMS(float, std::uint32_t)
SUMLAB_SEGMENT_SUMS(float, std::uint64_t)
SUMLAB_SEGMENT_SUMS(double, std::int32_t)
SUMLAB_SEGMENT_SUMS(double, std::int64_t)
SUMLAB_SEGMENT_SUMS(double, std::uint32_t)
SUMLAB_SEGMENT_SUMS(double, std::uint64_t)
#undef SUMLAB_SEGMENT_SUMS

template void validate_offsets<std::int32_t>(std::span<const std::int32_t>, std::size_t);
template void validate_offsets<std::int64_t>(std::span<const std::int64_t>, std::size_t);
template void validate_offsets<std::uint32_t>(std::span<const std::uint32_t>, std::size_t);
template void validate_offsets<std::uint64_t>(std::span<const std::uint64_t>, std::size_t);

}  // namespace sumlab::reference
