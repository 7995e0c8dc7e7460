// Exact segment sums: validate the CSR offsets, then one correctly rounded exact sum per segment.
#include "reference/segment_sums.hpp"

#include <stdexcept>
#include <string>

#include "core/segmented/offsets.hpp"
#include "reference/mpfr_sum.hpp"

namespace sumlab::reference {

// One validator for the whole lab: core/segmented/offsets.hpp (core cannot depend on reference).
template <class Offset> void validate_offsets(std::span<const Offset> offsets, std::size_t n) {
  segmented::validate_offsets<Offset>(offsets, n);
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
