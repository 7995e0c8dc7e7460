#pragma once
// Serial (recursive) summation: s = (((x0 + x1) + x2) + ... ) + x_{n-1}, left to right.
//
// Assumes IEEE binary32/64, round-to-nearest-even, no FMA contraction (the project builds with
// -ffp-contract=off), no reassociation (never -ffast-math).
// Order: a single dependency chain; element i passes through n-1-i (or n-1 for x0) roundings.
// Bound (Higham 1993, to first order): |s_hat - s| <= gamma_{n-1} * sum|x_i|, gamma_k = ku/(1-ku),
//   where u is the unit roundoff of the ACCUMULATOR type Acc; the final conversion from a wider
//   Acc to T adds u_T |s_hat|.
// Order dependence: yes, the result changes with the order of the elements.
// n = 0 gives +0. The accumulator starts at x0, not at +0, so that a sum of negative zeros is -0
// as IEEE addition gives (starting from +0 would turn [-0] into +0).
#include <cstddef>
#include <span>

namespace sumlab {

template <class T, class Acc = T> T serial_sum(std::span<const T> x) {
  if (x.empty()) return T(0);
  Acc s = static_cast<Acc>(x[0]);
  for (std::size_t i = 1; i < x.size(); ++i) s += static_cast<Acc>(x[i]);
  return static_cast<T>(s);
}

}  // namespace sumlab
