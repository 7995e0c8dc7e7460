#pragma once
// Exact prefix sums: every prefix of x correctly rounded (round-to-nearest-even) to T, once. The
// reference for the scans (plus and segmented). No MPFR types here.
//
// WHY exact: a running MPFR sum at P = (emax + 1 - e_min) + 64 + 3 bits (reference/mpfr_sum.hpp's
// precision) holds every partial sum of fewer than 2^64 values of T exactly: each is an integer
// multiple of 2^e_min below 2^(emax+1+64) in magnitude. So every mpfr_add is exact (its ternary
// value is checked to be 0) and each prefix is rounded to T exactly once (mpfr_get_flt /
// mpfr_get_d, to +-Inf past the overflow threshold).
// IEEE specials per prefix, as an infinitely precise serial sum would give them: a NaN so far, or
// +Inf and -Inf both, -> NaN; +Inf (-Inf) so far -> +Inf (-Inf); every term so far -0 -> -0; an
// exact zero otherwise -> +0.
// Cost: one P-bit addition and one rounding per element (~0.1-0.2 us; P = 2165 bits for double).
#include <cstdint>
#include <span>
#include <vector>

namespace sumlab::reference {

// Inclusive: out[i] = round(x[0] + .. + x[i]). Exclusive: out[0] = +0, out[i] = inclusive[i-1].
template <class T> std::vector<T> exact_prefix_sums(std::span<const T> x, bool inclusive = true);

// The segmented form: the running sum restarts at every i with heads[i] != 0 (and at i = 0), the
// meaning of core/scan/segmented_op.hpp's operator. Exclusive is the inclusive shifted by one
// (+0 first), the value the operator's exclusive scan carries (the previous segment's total at a
// head). Throws std::invalid_argument when heads.size() != x.size().
template <class T>
std::vector<T> exact_segmented_prefix_sums(std::span<const T> x, std::span<const std::uint8_t> heads,
                                           bool inclusive = true);

}  // namespace sumlab::reference
