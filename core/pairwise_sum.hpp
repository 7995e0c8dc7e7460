#pragma once
// Pairwise (recursive halving) summation with a configurable base case.
//
// Assumes IEEE binary32/64, round-to-nearest-even, no FMA contraction, no reassociation.
// Order: sum(x[0:n]) = sum(x[0:m]) + sum(x[m:n]) with m = floor(n/2), recursively, down to runs of
//   at most `base` elements, which are summed serially left to right. base = 1 is the textbook
//   tree (every leaf is one element); NumPy-like codes use larger bases for speed.
// Bound: |s_hat - s| <= gamma_d * sum|x_i| with d = pairwise_depth(n, base) =
//   (base - 1) + ceil(log2(ceil(n / base)))-ish, computed exactly by pairwise_depth() below:
//   d is the largest number of roundings any element passes through (Higham 1993, eq. (3.6)).
// Order dependence: yes.
#include <cstddef>
#include <span>

namespace sumlab {

template <class T> T pairwise_sum(std::span<const T> x, std::size_t base = 1) {
  if (base == 0) base = 1;
  const std::size_t n = x.size();
  if (n == 0) return T(0);
  if (n <= base) {
    T s = x[0];
    for (std::size_t i = 1; i < n; ++i) s += x[i];
    return s;
  }
  const std::size_t m = n / 2;
  const T left = pairwise_sum(x.first(m), base);
  const T right = pairwise_sum(x.subspan(m), base);
  return left + right;
}

// The largest number of additions any single element of an n-element input passes through.
inline std::size_t pairwise_depth(std::size_t n, std::size_t base = 1) {
  if (base == 0) base = 1;
  if (n <= 1) return 0;
  if (n <= base) return n - 1;
  const std::size_t m = n / 2;
  const std::size_t a = pairwise_depth(m, base), b = pairwise_depth(n - m, base);
  return 1 + (a > b ? a : b);
}

}  // namespace sumlab
