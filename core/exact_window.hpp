#pragma once
// The exact sum's fast path for long spans (core/exact_sum.hpp), on x86-64 CPUs with AVX2;
// elsewhere exact_window_available() is false and the superaccumulator's chunks take every input.
//
// Each input is taken as a double (a float widens exactly). A block of exact_window_block
// consecutive inputs is taken when every one is, as a double, normal, nonzero and finite, and the
// block's biased exponents lie within 63 of its largest, E >= 64 (+ 925 for floats, below). Then
// each x = (-1)^s m 2^(e - 1) (units of 2^-1074, the smallest double subnormal; m < 2^53 with the
// hidden bit) is m 2^(e - E + 63) 2^(E - 64): a shift of m by 0..63 into a 117-bit two-word
// integer, added in four 64-bit lanes as three column sums (the low word's two 32-bit halves and
// the high word), a negative input as the complement of both words plus one (counted). Every step
// is integer and exact; for 1024 inputs no column can overflow (the bounds are in
// exact_window.cpp). The block's exact sum is returned as WindowSum, which the caller adds into
// its limbs. For floats the units are the float's smallest subnormal, 2^-149 = 2^925 2^-1074, so
// a block is taken only when E - 64 >= 925 (its largest |x| >= 2^-34), and shift = E - 64 - 925.
// Measured (bench/cpu_sums_bench.cpp, n = 10^7 uniform inputs, medians of 7, runs on a 2-core
// machine): the superaccumulator took 0.79x-0.99x the ordered double loop's time for doubles with
// this path (ten runs), 1.16x-1.30x without (three); floats 0.82x-0.94x of the same loop.
#include <cstddef>
#include <cstdint>

namespace sumlab::detail {

inline constexpr std::size_t exact_window_block = 1024;

// A block's exact sum: (hi 2^64 + mid 2^32 + lo) 2^shift in units of the input type's smallest
// subnormal. |hi| <= 2^62, 0 <= mid, lo < 2^43, 0 <= shift <= 1982 (double), 161 (float).
struct WindowSum {
  std::int64_t hi = 0;
  std::int64_t mid = 0;
  std::int64_t lo = 0;
  int shift = 0;
};

// True when this build and this CPU can run exact_window_blocks (x86-64 with AVX2).
bool exact_window_available();

// Sums the whole blocks of x[0, n), in order from the start, one WindowSum each into out, and
// stops before the first block it cannot take (see above), after max_out blocks, or when fewer
// than exact_window_block inputs are left. Returns the number of blocks summed. Only when
// exact_window_available().
std::size_t exact_window_blocks(const double* x, std::size_t n, WindowSum* out, std::size_t max_out);
std::size_t exact_window_blocks(const float* x, std::size_t n, WindowSum* out, std::size_t max_out);

}  // namespace sumlab::detail
