#pragma once
// Kahan's compensated summation.
//
// Assumes IEEE binary32/64, round-to-nearest-even, no FMA contraction and above all no
// reassociation: under -ffast-math a compiler may simplify c = (t - s) - y to 0 and silently turn
// this into the serial sum.
// Order: serial, left to right, with a running compensation c holding (the negative of) the low
//   part lost by the last addition:  y = x_i - c;  t = s + y;  c = (t - s) - y;  s = t.
//   s starts at x0 (so a sum of -0s is -0), c at +0.
// Bound (Knuth, TAOCP 2, 4.2.2 ex. 19; Goldberg 1991, Thm 8; Higham 2002, Sec. 4.3):
//   |s_hat - s| <= (2u + O(n u^2)) * sum|x_i|; the explicit form for every n that sumlab reports,
//   u|s| + 2u S + ~6 n u^2 S, is bound::kahan_chain (core/error_bound.hpp, proof in its .cpp).
// Order dependence: yes, but weakly (the bound is independent of n to first order).
// Infinities: once s is infinite, c = (t - s) - y = Inf - Inf = NaN, and the next step's y = x - c
// is NaN. So an infinity, given or reached by overflow, makes the result NaN unless it is the last
// element (the NaN c is never used: the result is s = +-Inf), or the first of exactly two.
// docs/special-values.md has the whole table: a property of the algorithm, reported, not hidden.
#include <cstddef>
#include <span>

namespace sumlab {

template <class T> struct KahanAccumulator {
  T s{};
  T c{};
  void add(T x) {
    const T y = x - c;
    const T t = s + y;
    c = (t - s) - y;
    s = t;
  }
};

template <class T> T kahan_sum(std::span<const T> x) {
  if (x.empty()) return T(0);
  KahanAccumulator<T> acc{x[0], T(0)};
  for (std::size_t i = 1; i < x.size(); ++i) acc.add(x[i]);
  return acc.s;
}

}  // namespace sumlab
