#pragma once
// NumPy's blocked pairwise summation (numpy/core/src/umath/loops_utils.h, `pairwise_sum`),
// re-implemented from its documented order as a named peer: what `np.sum` does on a contiguous
// float array.
//
// Assumes IEEE binary32/64, round-to-nearest-even, no FMA contraction, no reassociation.
// Order: np.add.reduce starts from the identity +0 and adds the blocked pairwise sum of the whole
//   array to it, once: result = +0 + block(x). That outer +0 changes no value but the sign of a
//   zero (NumPy's sum of -0s is +0, and so is ours: tests/python/test_numpy_peer.py compares the
//   bits with numpy itself). block(x):
//   n < 8:        serial, left to right, starting from x0 (NumPy starts from 0; the same value).
//   n <= 128:     eight accumulators r[j] = x[j]; r[j] += x[i+j] for i = 8, 16, ... (each a serial
//                 chain over a stride-8 subsequence); then ((r0+r1)+(r2+r3)) + ((r4+r5)+(r6+r7));
//                 then the n mod 8 leftovers are added serially.
//   n > 128:      m = n/2 rounded down to a multiple of 8; sum(x[0:m]) + sum(x[m:n]).
// Bound: gamma_d * sum|x_i|, d = numpy_pairwise_depth(n) (the longest chain of roundings).
// Order dependence: yes.
#include <cstddef>
#include <span>

namespace sumlab {

inline constexpr std::size_t numpy_block = 128;

template <class T> T numpy_pairwise_block(std::span<const T> x) {
  const std::size_t n = x.size();
  if (n == 0) return T(0);
  if (n < 8) {
    T s = x[0];
    for (std::size_t i = 1; i < n; ++i) s += x[i];
    return s;
  }
  if (n <= numpy_block) {
    T r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = x[j];
    std::size_t i = 8;
    for (; i + 8 <= n; i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] += x[i + j];
    T s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += x[i];
    return s;
  }
  std::size_t m = n / 2;
  m -= m % 8;
  return numpy_pairwise_block(x.first(m)) + numpy_pairwise_block(x.subspan(m));
}

template <class T> T numpy_pairwise_sum(std::span<const T> x) { return T(0) + numpy_pairwise_block(x); }

inline std::size_t numpy_pairwise_depth(std::size_t n) {
  if (n <= 1) return 0;
  if (n < 8) return n - 1;
  if (n <= numpy_block) return (n / 8 - 1) + 3 + n % 8;
  std::size_t m = n / 2;
  m -= m % 8;
  const std::size_t a = numpy_pairwise_depth(m), b = numpy_pairwise_depth(n - m);
  return 1 + (a > b ? a : b);
}

}  // namespace sumlab
