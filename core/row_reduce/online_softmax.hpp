#pragma once
// The online softmax (Milakov & Gimelshein 2018): a row's (m, l) = (running max, sum of exp(x - m))
// kept in one pass, two states merged by rescaling both sums to the larger max. The arithmetic of
// the `softmax_online` row kernel (CPU model and GPU alike). exp is acc_exp (row_math.hpp).
//
//   identity       (-Inf, 0)
//   step(x)        x > m:  l = fma(l, exp(m - x), 1); m = x
//                  else:   l = l + (x == m ? 1 : exp(x - m))
//   merge(a, b)    M = (b.m > a.m ? b.m : a.m); the side that holds M keeps its l, the other's is
//                  rescaled: l = fma(l_a, exp(a.m - M), l_b) where b holds it (fma(l_b, ...,
//                  l_a) where a does); where a.m == b.m, l = l_a + l_b; m = M
//   probability    p = exp(x - m) / l                                       (softmax_probability)
// Why "== M ? 1": exp(0) is 1 anyway for finite values; the test makes (-Inf) - (-Inf) and
// (+Inf) - (+Inf) never reach exp, so the identity merges exactly (merge(identity, b) == b, bits
// included), two idle lanes stay the identity, and -Inf inputs contribute 0 once a finite max
// exists. The merge is commutative in bits (one max, and the fma's operands are chosen by which
// side holds it, not by their order) and associative to rounding (every exponent stays <= 0, so
// nothing overflows; each rescaling is one rounded exp and one rounded fma).
// Specials (torch.softmax semantics): a NaN input makes l NaN (exp(NaN)), hence every probability
// NaN; a row whose max is not finite (any +Inf, all -Inf, or cols = 0) has every output NaN
// (softmax_probability checks m), as torch gives NaN for Inf - Inf. m itself is never NaN.
#include "core/hd.hpp"
#include "core/row_reduce/row_math.hpp"

namespace sumlab::row_reduce {

template <class Acc> struct SoftmaxState {
  Acc m;
  Acc l;
};

template <class Acc> SUMLAB_HD inline SoftmaxState<Acc> softmax_identity() {
  return SoftmaxState<Acc>{-acc_inf<Acc>(), Acc(0)};
}

// The step above with one exp and no branch (a GPU warp whose lanes take both sides would run two
// exps): its argument is -|x - m|, which is m - x where x > m (m - x is -(x - m) exactly) and
// x - m elsewhere, NaN where either is (-0 where x == m, whose exp is 1 as +0's), and exp's result
// is unused where x == m (its argument may be NaN there: -Inf - -Inf).
template <class Acc> SUMLAB_HD inline SoftmaxState<Acc> online_softmax_step(SoftmaxState<Acc> s, Acc x) {
  const bool up = x > s.m;
  const Acc e = acc_exp(-acc_abs(x - s.m));
  // fma(l, e, 1) where x > m; l + 1 or l + e (fma(l, 1, e') is l + e' exactly) elsewhere.
  s.l = acc_fma(s.l, up ? e : Acc(1), x >= s.m ? Acc(1) : e);
  s.m = up ? x : s.m;
  return s;
}

// The merge above with one exp and no branch: s = exp(-|a.m - b.m|) rescales the side without M
// (m - M is -|a.m - b.m| exactly), or s = 1 where the maxima are equal (fma(l, 1, l') is l + l',
// and the argument's Inf - Inf never reaches exp). m is never NaN, so one side holds M.
template <class Acc> SUMLAB_HD inline SoftmaxState<Acc> online_softmax_merge(const SoftmaxState<Acc>& a,
                                                                             const SoftmaxState<Acc>& b) {
  const bool b_max = b.m > a.m;
  const Acc e = acc_exp(b_max ? a.m - b.m : b.m - a.m);
  const Acc s = a.m == b.m ? Acc(1) : e;
  return SoftmaxState<Acc>{b_max ? b.m : a.m, b_max ? acc_fma(a.l, s, b.l) : acc_fma(b.l, s, a.l)};
}

template <class Acc> struct OnlineSoftmaxOp {
  using State = SoftmaxState<Acc>;
  // merge(x, identity) is x and merge(identity, identity) the identity, bit for bit: see above.
  static constexpr bool exact_identity = true;
  SUMLAB_HD static State identity() { return softmax_identity<Acc>(); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return online_softmax_merge(a, b); }
};

// exp(x - m) / l, or NaN for the whole row when m is not finite (see above).
template <class Acc> SUMLAB_HD inline Acc softmax_probability(Acc x, Acc m, Acc l) {
  if (!acc_isfinite(m)) return acc_nan<Acc>();
  return acc_exp(x - m) / l;
}

}  // namespace sumlab::row_reduce
