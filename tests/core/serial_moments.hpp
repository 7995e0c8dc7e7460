#pragma once
// A test oracle, written independently of the product's arithmetic (core/row_reduce/welford.hpp,
// one_pass_moments.hpp, two_pass_moments.hpp, which the row kernels and their model compile):
// mean and variance by the textbook one-pass formula, two passes, Welford's update, and the
// Chan–Golub–LeVeque merge of (count, mean, M2) summaries, serially on the host.
//
// Assumes IEEE arithmetic, round-to-nearest-even, no FMA contraction, no reassociation.
// Variance here is the population variance M2 / n (what LayerNorm uses); M2 = sum (x_i - mean)^2.
// Accumulation happens in Acc (float inputs can be accumulated in float or double).
//
// * textbook:  sum and sum of squares in one serial pass; var = sumsq/n - mean^2. Cancels
//   catastrophically when |mean| >> sigma: relative error ~ u * (mean/sigma)^2, and the result can
//   be negative (Chan, Golub & LeVeque 1983).
// * two-pass:  mean = (serial sum)/n, then M2 = serial sum of (x - mean)^2. Error ~ n u (+ the
//   error of the mean squared), no cancellation.
// * Welford:   per element: n += 1; d = x - mean; mean += d / n; M2 += d * (x - mean).
// * Chan merge of A and B: n = nA + nB; d = meanB - meanA; mean = meanA + d * nB / n;
//   M2 = M2A + M2B + d^2 * nA * nB / n. Associative in exact arithmetic (to rounding in floating
//   point), so usable in any tree; with nA = nB it reduces to the equal-count GPU lane merge.
// Order dependence: all of them, through rounding.
#include <cstddef>
#include <span>

namespace sumlab {

template <class Acc> struct MomentSummary {
  Acc count{0};
  Acc mean{0};
  Acc m2{0};
  Acc variance() const { return count > Acc(0) ? m2 / count : Acc(0); }
};

template <class Acc> MomentSummary<Acc> chan_merge(const MomentSummary<Acc>& a,
                                                   const MomentSummary<Acc>& b) {
  if (a.count == Acc(0)) return b;
  if (b.count == Acc(0)) return a;
  MomentSummary<Acc> r;
  r.count = a.count + b.count;
  const Acc d = b.mean - a.mean;
  r.mean = a.mean + d * (b.count / r.count);
  r.m2 = (a.m2 + b.m2) + d * d * (a.count * b.count / r.count);
  return r;
}

template <class Acc> struct WelfordAccumulator {
  MomentSummary<Acc> state;
  void add(Acc x) {
    state.count += Acc(1);
    const Acc d = x - state.mean;
    state.mean += d / state.count;
    state.m2 += d * (x - state.mean);
  }
};

template <class T, class Acc = T> MomentSummary<Acc> welford_moments(std::span<const T> x) {
  WelfordAccumulator<Acc> w;
  for (T v : x) w.add(static_cast<Acc>(v));
  return w.state;
}

template <class T, class Acc = T> MomentSummary<Acc> two_pass_moments(std::span<const T> x) {
  MomentSummary<Acc> r;
  if (x.empty()) return r;
  r.count = static_cast<Acc>(x.size());
  Acc s(0);
  for (T v : x) s += static_cast<Acc>(v);
  r.mean = s / r.count;
  for (T v : x) {
    const Acc d = static_cast<Acc>(v) - r.mean;
    r.m2 += d * d;
  }
  return r;
}

// Returns M2 = n * (sumsq/n - mean^2): may be negative, which is the point of including it.
template <class T, class Acc = T> MomentSummary<Acc> textbook_moments(std::span<const T> x) {
  MomentSummary<Acc> r;
  if (x.empty()) return r;
  r.count = static_cast<Acc>(x.size());
  Acc s(0), sq(0);
  for (T v : x) {
    const Acc a = static_cast<Acc>(v);
    s += a;
    sq += a * a;
  }
  r.mean = s / r.count;
  r.m2 = (sq / r.count - r.mean * r.mean) * r.count;
  return r;
}

}  // namespace sumlab
