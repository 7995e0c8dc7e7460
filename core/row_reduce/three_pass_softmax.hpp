#pragma once
// The three-pass softmax: the row max, then l = sum of exp(x - max), then p = exp(x - max) / l;
// the arithmetic of the `softmax_three_pass` row kernel (CPU model and GPU alike).
//
//   pass 1  thread m = (x > m ? x : m) from -Inf; tree node the same (NaN is skipped here: a NaN
//           input still makes l NaN in pass 2, hence every output NaN)
//   pass 2  thread l = l + (x == m ? 1 : exp(x - m)) from +0; tree node l_a + l_b
//   pass 3  softmax_probability (online_softmax.hpp): exp(x - m) / l, NaN when m is not finite
// It reads the row three times where the online version reads it twice; with equal inputs the two
// differ only in how l is accumulated (rescaled partial sums vs exp against the final max).
#include "core/hd.hpp"
#include "core/row_reduce/online_softmax.hpp"
#include "core/row_reduce/row_math.hpp"

namespace sumlab::row_reduce {

template <class Acc> SUMLAB_HD inline Acc max_step(Acc m, Acc x) { return x > m ? x : m; }

template <class Acc> SUMLAB_HD inline Acc sum_exp_step(Acc l, Acc x, Acc m) {
  // The same value either way. Float's exp has no branch, so it runs for every element and the
  // loop has none; double's branches inside, and computing it where x == m too costs the kernel 3
  // registers, one 256-thread block an SM.
  if constexpr (sizeof(Acc) == 4) {
    const Acc e = acc_exp(x - m);  // unused where x == m (NaN there when both are infinite)
    return l + (x == m ? Acc(1) : e);
  } else {
    return l + (x == m ? Acc(1) : acc_exp(x - m));
  }
}

template <class Acc> struct MaxOp {
  using State = Acc;
  SUMLAB_HD static State identity() { return -acc_inf<Acc>(); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return max_step(a, b); }
};

}  // namespace sumlab::row_reduce
