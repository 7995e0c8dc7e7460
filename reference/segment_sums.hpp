#pragma once
// Exact per-segment sums of a CSR-segmented array, each correctly rounded to T: the reference for
// segmented reductions (one sum per row of a ragged matrix, per graph vertex, per batch item).
// No MPFR types here.
//
// Segment j is values[offsets[j] : offsets[j+1]] (half-open), for j = 0 .. offsets.size() - 2.
// Valid offsets: at least one entry, offsets[0] == 0, non-decreasing, every entry <= n, and
// offsets.back() == n = values.size(). Empty segments are allowed (their sum is +0).
// WHY exact: each segment is summed by reference::correctly_rounded_sum (see mpfr_sum.hpp): an
// exact MPFR sum rounded once to T, with the same IEEE rules for zeros, NaN and Inf.
// Cost: ~25 ns per element plus ~0.5 us per segment (it sets up three P-bit MPFR variables).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sumlab::reference {

// Throws std::invalid_argument naming the first bad position (and its value) when the offsets
// are not valid for values.size() elements. Offset is one of std::int32_t, std::int64_t,
// std::uint32_t, std::uint64_t (std::size_t).
template <class T, class Offset>
std::vector<T> exact_segment_sums(std::span<const T> values, std::span<const Offset> offsets);

// The validation alone (the same exceptions), for callers that build their own segmented data:
// core/segmented/offsets.hpp's validate_offsets with the offset type's own index limit.
template <class Offset> void validate_offsets(std::span<const Offset> offsets, std::size_t n);

}  // namespace sumlab::reference
