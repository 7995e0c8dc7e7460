#pragma once
// The textbook one-pass variance: sum s and sum of squares q together, var = q/n - (s/n)^2, the
// arithmetic of the `textbook` row kernel (CPU model and GPU alike).
//
// Order: per thread (s, q) += (x, x * x); tree node (s_a + s_b, q_a + q_b); identity (+0, +0);
// finish: mean = s / n, var = q / n - mean * mean.
// Error: q/n and mean^2 are both ~ mean^2 and each carries a rounding error ~ u mean^2, so the
// difference has an absolute error ~ u mean^2 (times the summation growth): a relative error
// ~ u (mean / sigma)^2 of the variance. At mean 1e4, sigma 1 in float that is ~6 (u = 2^-24,
// mean^2 = 1e8 where float spacing is 8): the sign of the result is noise, and a negative variance
// makes sqrt, hence the normalised row, NaN (the seeds' 357 of 1024 rows).
#include "core/hd.hpp"
#include "core/row_reduce/mean_variance.hpp"

namespace sumlab::row_reduce {

template <class Acc> struct SumSquares {
  Acc s;
  Acc q;
};

template <class Acc> SUMLAB_HD inline SumSquares<Acc> sum_squares_step(SumSquares<Acc> a, Acc x) {
  a.s = a.s + x;
  a.q = a.q + x * x;
  return a;
}

template <class Acc> struct SumSquaresOp {
  using State = SumSquares<Acc>;
  SUMLAB_HD static State identity() { return State{Acc(0), Acc(0)}; }
  SUMLAB_HD static State combine(const State& a, const State& b) { return State{a.s + b.s, a.q + b.q}; }
};

// Mean and population variance; the variance may be negative (that is the point of this method).
template <class Acc> SUMLAB_HD inline MeanVariance<Acc> textbook_finish(const SumSquares<Acc>& a, Acc n) {
  const Acc mean = a.s / n;
  return MeanVariance<Acc>{mean, a.q / n - mean * mean};
}

}  // namespace sumlab::row_reduce
