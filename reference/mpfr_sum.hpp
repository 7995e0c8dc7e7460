#pragma once
// Exact references computed with MPFR. This header has no MPFR types: studies and tests include it
// freely, and only reference/*.cpp sees <mpfr.h>.
//
// Assumptions: T is IEEE binary32 (float) or binary64 (double); results are for round-to-nearest-
// even. WHY the sum is exact: every finite x_i is an integer multiple of 2^e_min (e_min =
// FloatTraits<T>::min_subnormal_exp) with |x_i| < 2^(emax+1), so the exact sum of n terms is an
// integer multiple of 2^e_min below 2^(emax+1+ceil(log2 n)) in magnitude: an integer of at most
// (emax+1-e_min) + ceil(log2(n+1)) bits. MPFR holds it exactly at P = (emax+1-e_min) + 64 + 3 bits
// for any n < 2^64 (and so every partial sum too: each is a sum of fewer terms). mpfr_sum and
// mpfr_add into P-bit variables are therefore exact (their ternary value is checked to be 0), and
// the only rounding is the final one to T (mpfr_get_flt / mpfr_get_d, round-to-nearest-even, to
// +-Inf past the overflow threshold: tests/reference/mpfr_sum_test.cpp checks it on hand-made
// cases; a sum below the normal range is a multiple of 2^e_min, hence exact).
// Cost: about 20-30 ns per element at n = 2^24 (one x86-64 core); memory O(1) in n (the input is
// consumed in chunks of 2^12). Thread-safe: each thread has its own workspace.
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>

#include "core/error_bound.hpp"
#include "core/exact_sum.hpp"

namespace sumlab::reference {

// The correctly rounded (round-to-nearest-even) sum of x in T, with IEEE results for the specials:
// n = 0 -> +0; all inputs -0 -> -0; an exact zero otherwise -> +0; any NaN, or +Inf and -Inf
// together -> NaN; +Inf (-Inf) present -> +Inf (-Inf); a finite exact sum beyond the range of T
// rounds to +-Inf as IEEE addition would.
template <class T> T correctly_rounded_sum(std::span<const T> x);

// A binary format narrower than float, for data that came as float16 or bfloat16 (widened exactly
// to float): precision p, the smallest normal exponent and the largest exponent.
struct NarrowFormat {
  int precision, emin, emax;
};
inline constexpr NarrowFormat float16_format{11, -14, 15};
inline constexpr NarrowFormat bfloat16_format{8, -126, 127};
// The exact sum of x correctly rounded (to nearest even, subnormals and overflow as IEEE) to
// format f, returned as a double (which holds every value of f exactly); the IEEE specials as
// correctly_rounded_sum's. x's values must be values of f (as float16/bfloat16 data widened).
double correctly_rounded_sum_in(std::span<const float> x, NarrowFormat f);

// The exact sum of x rounded once to double (round-to-nearest-even), with the same special rules.
// For float inputs this is a far better reference than the float result: the exact sum of floats
// usually needs more than 24 bits, and this keeps 53 of them.
template <class T> double exact_sum_as_double(std::span<const T> x);

// How far `computed` is from the exact sum of x. Every field is computed from the exact sum
// (held in MPFR) and rounded to double once at the end.
struct ErrorMetrics {
  double exact = 0;        // exact sum rounded to double (for display)
  double rounded = 0;      // the exact sum correctly rounded to T, widened to double
  double abs_error = 0;    // |computed - exact|
  double rel_error = 0;    // abs_error / |exact|; 0 if both are 0; +inf if only exact is 0
  double ulps = 0;         // abs_error / ulp_T(rounded): error in ulps of the correctly rounded sum
  double correct_bits = 0; // p exactly when exact; else -log2(rel_error) clamped to
                           // [0, nextafter(p, 0)] (core/metrics.hpp correct_bits)
  double sum_abs = 0;      // sum |x_i| (rounded to double)
  double condition = 0;    // sum |x_i| / |sum x_i|; +inf for an exact zero sum of nonzero terms
                           // (1 when every term is 0; core/metrics.hpp condition_number)
  bool special = false;    // an input or the computed value is NaN or Inf: errors are not defined
  bool input_special = false;    // an input is NaN or +-Inf
  bool exact_overflows = false;  // every input finite, but the correctly rounded sum is +-Inf
  bool result_finite = true;     // the computed value is finite

  // What core/error_bound.hpp's judge() needs.
  Judged judged() const { return {input_special, exact_overflows, result_finite, abs_error}; }
};
// When `special`: abs_error, rel_error, ulps and correct_bits are NaN; `rounded` is the IEEE
// special sum (correctly_rounded_sum); exact/sum_abs/condition are still filled when every input
// is finite (only the computed value was NaN/Inf), and NaN otherwise.
// An exact sum beyond the range of T is not special: `rounded` is then +-Inf and ulps are counted
// in ulp(max) of T.
template <class T> ErrorMetrics measure(std::span<const T> x, T computed);

// The exact sum of x computed once, to measure many results of the same input cheaply
// (measure(x, c) == ExactSum<T>(x).measure(c), field for field).
template <class T> class ExactSum {
 public:
  explicit ExactSum(std::span<const T> x);
  // From exact totals computed elsewhere (gpu_exact's limbs, summed where the data lies): the exact
  // sum with its special counts, and the exact sum of the magnitudes. The same measures as
  // ExactSum(x) of the same data, field for field: the positive and negative parts are
  // (sum_abs + sum) / 2 and (sum - sum_abs) / 2, exact at P bits.
  ExactSum(const Superaccumulator<T>& sum, const Superaccumulator<T>& sum_abs);
  ~ExactSum();
  ExactSum(const ExactSum&) = delete;
  ExactSum& operator=(const ExactSum&) = delete;
  ErrorMetrics measure(T computed) const;
  // The correctly rounded sum in T (IEEE specials included), widened to double.
  double rounded() const { return rounded_; }
  // Whether both hold the same exact values (the positive and negative parts, compared exactly,
  // not rounded), the same count and the same specials: how two ways of computing the exact sum
  // of one input are checked against each other.
  bool same_exact(const ExactSum& other) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  double rounded_ = 0;
};

}  // namespace sumlab::reference
