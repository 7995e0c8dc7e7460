#pragma once
// Welford's update inside a thread and the Chan-Golub-LeVeque merge of (count, mean, M2)
// summaries across threads: the arithmetic of the `welford` and `welford_equal` row kernels,
// compiled for the CPU model and the GPU alike.
//
// State: n (the count, held in Acc: exact up to 2^24 in float), mean, m2 = sum (x - mean)^2.
// Variance (population) = m2 / n. Identity: (0, 0, 0).
//   welford_step:  n += 1; d = x - mean; mean += d / n; m2 += d * (x - mean)        (Welford 1962)
//   chan_merge:    an empty side returns the other unchanged (bits included); else
//                  n = na + nb; d = mean_b - mean_a; mean = mean_a + d * (nb / n);
//                  m2 = (m2_a + m2_b) + d * d * (na * nb / n)           (Chan, Golub & LeVeque 1983)
//                  (tests/core/serial_moments.hpp, written apart, must give the same bits).
//   chan_merge_equal: the GPU lane merge for na == nb (every lane of a warp holds the same count
//                  when T divides cols): d = mean_b - mean_a; mean = mean_a + 0.5 * d;
//                  m2 = m2_a + (m2_b + d * d * 0.5 * na); n = 2 * na. Mathematically the general
//                  merge with nb / n = 1/2 and na nb / n = na / 2, but it associates the M2 sum
//                  differently, so its bits differ; where the counts differ (or are 0) it falls
//                  back on the general merge, so it is correct for every cols.
// Bound (Chan et al.): the merged M2 carries the error of its parts plus O(u) relative terms per
// level; the merge is associative in exact arithmetic, to rounding in floating point.
// Neither merge is bitwise commutative (merge(a, b) and merge(b, a) round differently), which is
// why the row kernels broadcast lane 0's result (row_kernel.hpp).
// Specials: a NaN or +-Inf input makes m2 (hence the variance) NaN: d = Inf, x - mean = NaN.
#include "core/hd.hpp"
#include "core/row_reduce/mean_variance.hpp"
#include "core/row_reduce/row_math.hpp"

namespace sumlab::row_reduce {

// A plain aggregate (no default member initialisers), so it can live in CUDA shared memory.
template <class Acc> struct RowMoments {
  Acc n;
  Acc mean;
  Acc m2;
};

template <class Acc> SUMLAB_HD inline RowMoments<Acc> moments_identity() {
  return RowMoments<Acc>{Acc(0), Acc(0), Acc(0)};
}

template <class Acc> SUMLAB_HD inline RowMoments<Acc> welford_step(RowMoments<Acc> s, Acc x) {
  s.n = s.n + Acc(1);
  const Acc d = x - s.mean;
  s.mean = s.mean + d / s.n;
  s.m2 = s.m2 + d * (x - s.mean);
  return s;
}

template <class Acc> SUMLAB_HD inline RowMoments<Acc> chan_merge(const RowMoments<Acc>& a,
                                                                 const RowMoments<Acc>& b) {
  if (a.n == Acc(0)) return b;
  if (b.n == Acc(0)) return a;
  RowMoments<Acc> r;
  r.n = a.n + b.n;
  const Acc d = b.mean - a.mean;
  r.mean = a.mean + d * (b.n / r.n);
  r.m2 = (a.m2 + b.m2) + d * d * (a.n * b.n / r.n);
  return r;
}

template <class Acc> SUMLAB_HD inline RowMoments<Acc> chan_merge_equal(const RowMoments<Acc>& a,
                                                                       const RowMoments<Acc>& b) {
  if (a.n != b.n || a.n == Acc(0)) return chan_merge(a, b);
  RowMoments<Acc> r;
  const Acc d = b.mean - a.mean;
  r.mean = a.mean + Acc(0.5) * d;
  r.m2 = a.m2 + (b.m2 + d * d * Acc(0.5) * a.n);
  r.n = Acc(2) * a.n;
  return r;
}

// mean and m2 / n; an empty row (n = 0) gives NaN for both (the identity's mean 0 is no mean).
template <class Acc> SUMLAB_HD inline MeanVariance<Acc> welford_finish(const RowMoments<Acc>& s) {
  if (s.n == Acc(0)) return MeanVariance<Acc>{acc_nan<Acc>(), acc_nan<Acc>()};
  return MeanVariance<Acc>{s.mean, s.m2 / s.n};
}

// Tree operations (identity + combine), for the warp/block trees of row_tree.hpp and gpu/rows/.
template <class Acc> struct ChanMergeOp {
  using State = RowMoments<Acc>;
  SUMLAB_HD static State identity() { return moments_identity<Acc>(); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return chan_merge(a, b); }
};
template <class Acc> struct ChanEqualMergeOp {
  using State = RowMoments<Acc>;
  SUMLAB_HD static State identity() { return moments_identity<Acc>(); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return chan_merge_equal(a, b); }
};

}  // namespace sumlab::row_reduce
