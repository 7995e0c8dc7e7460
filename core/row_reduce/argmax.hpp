#pragma once
// argmax as a (value, index) reduction, torch.argmax semantics; the arithmetic of the `argmax` row
// kernel (CPU model and GPU alike).
//
// Order on candidates (better(b, a): b replaces a):
//   1. NaN is larger than every number: a NaN beats a non-NaN; between two NaNs the lower index
//      wins (torch.argmax returns the first NaN);
//   2. otherwise the larger value wins (+0 and -0 are equal, -Inf is a value like any other);
//   3. equal values: the lower index wins (ties to the first occurrence).
// This is a total order on (value, index) pairs with distinct indices, so the winner is the same
// element whatever the reduction tree: argmax is exact and `shape_invariant` (the value returned
// is the winning input element itself, widened).
// Identity: (-Inf, index = kNoIndex = INT32_MAX): every real element beats it (an element equal
// to -Inf ties and has the lower index). An empty row (cols = 0) keeps it and reports index -1
// and value -Inf (torch raises for an empty argmax; the lab defines it).
#include <cstdint>

#include "core/hd.hpp"
#include "core/row_reduce/row_math.hpp"

namespace sumlab::row_reduce {

inline constexpr std::int32_t kNoIndex = 0x7fffffff;

template <class Acc> struct ArgmaxState {
  Acc value;
  std::int32_t index;
};

template <class Acc> SUMLAB_HD inline ArgmaxState<Acc> argmax_identity() {
  return ArgmaxState<Acc>{-acc_inf<Acc>(), kNoIndex};
}

// True when b should replace a. The three rules as one expression of & and | (a NaN compares
// false with everything), so that a GPU merge is selections, not branches: b is larger, or a NaN
// over a number, or of the lower index and equal to a or a NaN like a.
template <class Acc> SUMLAB_HD inline bool argmax_better(const ArgmaxState<Acc>& b, const ArgmaxState<Acc>& a) {
  const bool bn = acc_isnan(b.value), an = acc_isnan(a.value);
  const bool lower = b.index < a.index;
  return (b.value > a.value) | (bn & !an) | (lower & ((b.value == a.value) | (bn & an)));
}

template <class Acc> SUMLAB_HD inline ArgmaxState<Acc> argmax_merge(const ArgmaxState<Acc>& a,
                                                                    const ArgmaxState<Acc>& b) {
  return argmax_better(b, a) ? b : a;
}

template <class Acc> SUMLAB_HD inline ArgmaxState<Acc> argmax_step(const ArgmaxState<Acc>& a, Acc x,
                                                                   std::int32_t index) {
  return argmax_merge(a, ArgmaxState<Acc>{x, index});
}

// One thread's fold, where the indices only grow (the GPU kernel's): a later element replaces the
// best so far exactly when argmax_better says so, which for a larger index reduces to "it is
// larger, or it is a NaN and the best is not". !(later <= best) holds when later is larger or
// either is a NaN, and best == best rules out a NaN best: two compares, no index compare, no
// branch. It needs a real element to start from: -Inf against the identity's -Inf would lose.
template <class V> SUMLAB_HD inline bool argmax_later_wins(V later, V best) {
  return !(later <= best) && best == best;
}

// The first maximum of x[0], ..., x[N-1] under the order above, its index the position: a tree of
// argmax_later_wins merges, each of two neighbouring ranges (the left one's indices the lower), so
// its depth is log2 N where a left fold's is N. Exact like every argmax tree: the same element wins.
template <int N, class V> SUMLAB_HD inline ArgmaxState<V> argmax_first_max(const V (&x)[N]) {
  static_assert(N > 0 && (N & (N - 1)) == 0, "a power of two");
  ArgmaxState<V> s[N];
  for (int u = 0; u < N; ++u) s[u] = ArgmaxState<V>{x[u], u};
  for (int w = 1; w < N; w *= 2)
    for (int u = 0; u < N; u += 2 * w)
      if (argmax_later_wins(s[u + w].value, s[u].value)) s[u] = s[u + w];
  return s[0];
}

template <class Acc> struct ArgmaxOp {
  using State = ArgmaxState<Acc>;
  SUMLAB_HD static State identity() { return argmax_identity<Acc>(); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return argmax_merge(a, b); }
};

// The reported index: -1 for an empty row.
SUMLAB_HD inline std::int64_t argmax_index(std::int32_t index) {
  return index == kNoIndex ? std::int64_t(-1) : std::int64_t(index);
}

}  // namespace sumlab::row_reduce
