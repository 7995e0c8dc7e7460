#pragma once
// Welford's update inside a thread and the Chan-Golub-LeVeque merge of (count, mean, M2)
// summaries across threads: the arithmetic of the `welford` and `welford_equal` row kernels,
// compiled for the CPU model and the GPU alike.
//
// State: n (the count, held in Acc: exact up to 2^24 in float), mean, m2 = sum (x - mean)^2.
// Variance (population) = m2 / n. Identity: (0, 0, 0).
//   welford_step:  n += 1; d = x - mean; mean += d / n; m2 += d * (x - mean)        (Welford 1962)
//                  where d / n is divide_by_count below: RN(d / n) by the count's reciprocal.
//   chan_merge:    an empty side returns the other unchanged (bits included); else
//                  n = na + nb; d = mean_b - mean_a; mean = mean_a + d * (nb / n);
//                  m2 = (m2_a + m2_b) + d * d * (na * nb / n)           (Chan, Golub & LeVeque 1983)
//                  (tests/core/serial_moments.hpp, written apart, must give the same bits);
//                  equal counts up to kChanEqualCountLimit skip both divisions, same bits (below).
//   chan_merge_equal: the GPU lane merge for na == nb (every lane of a warp holds the same count
//                  when T divides cols): d = mean_b - mean_a; mean = mean_a + 0.5 * d;
//                  m2 = m2_a + (m2_b + d * d * 0.5 * na); n = 2 * na. Mathematically the general
//                  merge with nb / n = 1/2 and na nb / n = na / 2, but it associates the M2 sum
//                  differently, so its bits differ; where the counts differ (or are 0) it falls
//                  back on the general merge, so it is correct for every cols.
// Bound (Chan, Golub and LeVeque 1983): the merged M2 carries the error of its parts plus, per
// level, relative terms of O(kappa u), kappa = sqrt(1 + n mean^2 / M2) the data's condition (the
// difference of the two means carries an error of about u |mean|); no verdict uses it. The merge
// is associative in exact arithmetic, to rounding in floating point.
// Neither merge is bitwise commutative (merge(a, b) and merge(b, a) round differently), which is
// why the row kernels broadcast lane 0's result (row_kernel.hpp).
// Specials: a NaN or +-Inf input makes m2 (hence the variance) NaN: d = Inf, x - mean = NaN; and the
// mean NaN, divide_by_count of an infinite d being NaN.
#include <cstdint>
#include <limits>

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

// Welford's division d / n, where n is a count, by its reciprocal r = RN(1/n) and one correction
// (Markstein 1990; Muller et al., Handbook of Floating-Point Arithmetic, 2nd ed., sec. 4.7):
//   q0 = RN(d r); e = fma(-q0, n, d) = d - q0 n exactly; q = fma(e, r, q0).
// r depends on the count alone, the same at a step for every thread of a row, so a GPU kernel reads
// it from a table (gpu/rows/moments_kernel.cuh) where a correctly rounded division costs a
// reciprocal, two refining fmas and a check with its branch at every element. The CPU model
// computes r = 1 / n; both then run the same three operations, so their bits agree by construction.
// Theorem: for 1 <= n <= kCountReciprocalLimit (2^(p-3): 2^21 in float, 2^50 in double, p the
// precision) and finite d, q = RN(d / n), except where d / n is exactly halfway between two
// subnormals (then q may be the other neighbour, one subnormal ulp from RN(d / n)) and the
// sign of a zero q (+0 where d = -0; harmless to the mean, which starts at +0 and so is never -0).
// Proof sketch, Q = d / n in [2^e, 2^(e+1)), u = 2^-p: |r n - 1| <= u, so |d r - Q| < 2^(e+1-p)
// and |q0 - Q| < 2 ulp(Q). d and q0 n are multiples of 2^(e-p) (q0 may sit one binade down),
// |e| <= 2 n ulp(Q) < 2^p 2^(e-p) for n < 2^(p-2), so e is exact (fma). Then q0 + e r =
// Q + (Q - q0)(r n - 1) is closer than 2 ulp(Q) u = 2^(e+2-2p) to Q. A rounding boundary m (an
// odd multiple of 2^(e-p), or of 2^(e-p-1) at the binade's foot) is never Q itself (Q = m would
// give d = n m more than p significant bits) and lies at least 2^(e-p-1) / n from it (d - n m is a
// nonzero multiple of 2^(e-p-1)); 2^(e+2-2p) <= 2^(e-p-1) / n for n <= 2^(p-3), so q0 + e r rounds
// as Q does. Below 2^-126 (float; 2^-1022 double) every value is a multiple of the smallest
// subnormal s, |q0 - Q| < s and the same argument holds, but there d / n can be exactly a midpoint
// (2k+1) s/2. No overflow: r <= 1. d = +-Inf gives q = NaN (d / n is +-Inf), d NaN gives NaN.
// tests/core/row_reduce_test.cpp holds q against d / n over every binade, the subnormal midpoints
// included. Counts above the limit divide directly (n up to 2^24 is exact in float).
template <class Acc> inline constexpr Acc kCountReciprocalLimit = Acc(std::uint64_t(1) << (std::numeric_limits<Acc>::digits - 3));

template <class Acc> SUMLAB_HD inline Acc count_reciprocal(Acc n) { return Acc(1) / n; }

// d / n as above, given r = count_reciprocal(n) and n <= kCountReciprocalLimit.
template <class Acc> SUMLAB_HD inline Acc divide_by_count(Acc d, Acc n, Acc r) {
  const Acc q0 = mul_rn(d, r);  // used negated too (core/portable_math.hpp)
  return acc_fma(acc_fma(-q0, n, d), r, q0);
}

// The step with d / n computed by divide(d, n): one definition for both forms below.
template <class Acc, class Divide> SUMLAB_HD inline RowMoments<Acc> welford_update(RowMoments<Acc> s, Acc x, Divide divide) {
  s.n = s.n + Acc(1);
  const Acc d = x - s.mean;
  s.mean = s.mean + divide(d, s.n);
  s.m2 = s.m2 + d * (x - s.mean);
  return s;
}

// The step, given r = count_reciprocal(s.n + 1) for a count s.n + 1 <= kCountReciprocalLimit.
template <class Acc> SUMLAB_HD inline RowMoments<Acc> welford_step(RowMoments<Acc> s, Acc x, Acc r) {
  return welford_update(s, x, [r](Acc d, Acc n) { return divide_by_count(d, n, r); });
}

// Counts above the limit divide directly.
template <class Acc> SUMLAB_HD inline RowMoments<Acc> welford_step(RowMoments<Acc> s, Acc x) {
  return welford_update(s, x, [](Acc d, Acc n) {
    return n <= kCountReciprocalLimit<Acc> ? divide_by_count(d, n, count_reciprocal(n)) : d / n;
  });
}

// The largest equal count k whose merge needs no division (chan_merge below): 2^floor(p/2), so
// that k * k is exact (4096 in float, 2^26 in double).
template <class Acc> inline constexpr Acc kChanEqualCountLimit = Acc(std::uint64_t(1) << (std::numeric_limits<Acc>::digits / 2));

// Where na == nb == k <= kChanEqualCountLimit (every merge of a row's tree when its threads hold
// equal shares), the two divisions are exact and skipped, with the same bits: n = 2k is exact,
// nb / n = 1/2 exactly, and na nb = k^2 is exact (k^2 <= 2^p), so na nb / n = k / 2 exactly, which
// is k * 0.5; every rounded operation then sees the operands it sees in the general formula. On a
// GPU the two correctly rounded divisions are most of a merge's dependent chain.
template <class Acc> SUMLAB_HD inline RowMoments<Acc> chan_merge(const RowMoments<Acc>& a,
                                                                 const RowMoments<Acc>& b) {
  if (a.n == Acc(0)) return b;
  if (b.n == Acc(0)) return a;
  RowMoments<Acc> r;
  r.n = a.n + b.n;
  const Acc d = b.mean - a.mean;
  Acc share, weight;  // nb / n and na nb / n
  if (a.n == b.n && a.n <= kChanEqualCountLimit<Acc>) {
    share = Acc(0.5);
    weight = a.n * Acc(0.5);
  } else {
    share = b.n / r.n;
    weight = a.n * b.n / r.n;
  }
  r.mean = a.mean + d * share;
  r.m2 = (a.m2 + b.m2) + d * d * weight;
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
// exact_identity: combine(x, identity) is x and combine(identity, identity) the identity, bit for
// bit (an empty side returns the other), which lets a tree skip the levels where one side is
// always the identity (gpu/rows/row_tree.cuh).
template <class Acc> struct ChanMergeOp {
  using State = RowMoments<Acc>;
  static constexpr bool exact_identity = true;
  SUMLAB_HD static State identity() { return moments_identity<Acc>(); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return chan_merge(a, b); }
};
template <class Acc> struct ChanEqualMergeOp {
  using State = RowMoments<Acc>;
  static constexpr bool exact_identity = true;  // it merges an empty side by chan_merge
  SUMLAB_HD static State identity() { return moments_identity<Acc>(); }
  SUMLAB_HD static State combine(const State& a, const State& b) { return chan_merge_equal(a, b); }
};

}  // namespace sumlab::row_reduce
