#pragma once
// Neumaier's improved Kahan–Babuška summation.
//
// Assumes IEEE binary32/64, round-to-nearest-even, no FMA contraction, no reassociation.
// Order: serial, left to right: t = s + x_i; the exact error of that addition (Fast2Sum, with the
//   larger-magnitude operand first) is added into a separate correction c; s = t. The result is
//   s + c, one final rounding. s starts at x0, c at +0.
// Bound (Ogita, Rump and Oishi 2005, Prop. 4.5: this is their Sum2): |s_hat - s| <= u |s| +
//   gamma(n-1)^2 sum|x_i| for (n-1) u < 1, the bound the registry judges with. The second-order
//   term grows as n^2 u^2, not n u^2: n floats just below half an ulp of a running sum near 1,
//   each rounded down, make the correction c itself lose about n^2 u^2. Unlike Kahan it stays
//   accurate when an addend is larger than the running sum.
// Order dependence: yes, weakly.
#include <cmath>
#include <cstddef>
#include <span>

namespace sumlab {

template <class T> T neumaier_sum(std::span<const T> x) {
  if (x.empty()) return T(0);
  T s = x[0];
  T c = T(0);
  for (std::size_t i = 1; i < x.size(); ++i) {
    const T t = s + x[i];
    if (std::fabs(s) >= std::fabs(x[i]))
      c += (s - t) + x[i];
    else
      c += (x[i] - t) + s;
    s = t;
  }
  // With an infinite s the corrections are NaN; the IEEE sum is s itself. A zero correction is
  // left out rather than added: s + (+0) would turn a sum of -0s (s = -0) into +0.
  if (!std::isfinite(s) || c == 0) return s;
  return s + c;
}

}  // namespace sumlab
