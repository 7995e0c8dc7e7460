#pragma once
// The two-pass variance: the mean first, then the mean of squared deviations from it; the
// arithmetic of the `two_pass` row kernel (CPU model and GPU alike).
//
// Order: pass 1 per thread s += x, tree node s_a + s_b, mean = s / n (every thread of the row gets
// lane 0's mean); pass 2 per thread q += (x - mean) * (x - mean) over the same columns (read again:
// at LLM row lengths the row is still in L1/L2, and the order is the one a register-resident
// version would use), tree node q_a + q_b; var = q / n.
// Error: no cancellation (every term >= 0); ~ (chain + tree depth) u relative, plus the effect of
// the rounded mean, which is second order: var(mean + e) = var + e^2.
#include "core/hd.hpp"

namespace sumlab::row_reduce {

template <class Acc> SUMLAB_HD inline Acc sum_step(Acc a, Acc x) { return a + x; }

template <class Acc> SUMLAB_HD inline Acc squared_deviation_step(Acc q, Acc x, Acc mean) {
  const Acc d = x - mean;
  return q + d * d;
}

template <class Acc> struct PlainSumOp {
  using State = Acc;
  SUMLAB_HD static State identity() { return Acc(0); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return a + b; }
};

}  // namespace sumlab::row_reduce
