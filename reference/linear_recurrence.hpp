#pragma once
// The linear recurrence h_t = a_t h_{t-1} + b_t (h_{-1} = 0) evaluated by MPFR, the reference for
// the serial loop and for the affine scans (core/scan/scan_ops.hpp AffineOp). No MPFR types here.
//
// Precision: kRecurrenceBits = 1024. The loop rounds twice per step (product, sum) with relative
// error <= 2^-1024 each, so its forward error at t is at most about 2t 2^-1024 cond_t, with
// cond_t = sum_k |b_k a_{k+1} .. a_t| / |h_t| (the recurrence's own condition number, the same
// factor that multiplies float's and double's errors). For t < 2^30 and cond_t < 2^900 that is
// below 2^-90 relative: negligible against double's unit roundoff 2^-53 (and float's 2^-24), so
// the measured errors are the float/double computation's own. MPFR's exponent range never
// overflows here; the values returned in double do past 1.8e308 (then +-Inf), so a study keeps
// the growth of |a| > 1 within range (it scales a so that the product stays finite).
// h_t is returned as an unevaluated double-double hi + lo (|lo| <= ulp(hi)/2): 106 bits, enough to
// measure a double result's error without the reference's own rounding in the way.
#include <span>
#include <vector>

namespace sumlab::reference {

inline constexpr long kRecurrenceBits = 1024;

struct ExactRecurrence {
  std::vector<double> hi, lo;  // h_t ~ hi[t] + lo[t]
};

// Throws std::invalid_argument when a.size() != b.size().
template <class T> ExactRecurrence exact_linear_recurrence(std::span<const T> a, std::span<const T> b);

// |computed - (hi + lo)| / |hi + lo|: 0 when both are 0, +inf when only the reference is 0, NaN when
// either is not finite. Accurate to a few ulps of the result (computed - hi is exact when they
// are within a factor 2 of each other, Sterbenz; a larger gap is an error of order 1 anyway).
double recurrence_relative_error(double computed, double hi, double lo);

}  // namespace sumlab::reference
