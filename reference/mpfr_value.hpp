#pragma once
// What every exact reference in reference/ shares: an owned MPFR variable, the precision that
// holds any exact sum of T values, the check that an operation was exact, and the one rounding.
//
// Why raw MPFR and not Boost.Multiprecision's mpfr_float: every arithmetic step of a reference is
// claimed exact, and MPFR proves it per call through the ternary value (0: no rounding happened),
// which require_exact() checks; mpfr_float's operators discard it. The references also build
// their terms through MPFR's custom interface (no allocation per element) and round to odd by
// hand, which the wrapper does not expose. What a wrapper would save is the RAII below.
#include <mpfr.h>

#include <stdexcept>
#include <string>

#include "core/float_traits.hpp"

namespace sumlab::reference {

// An owned mpfr_t of a given precision (its value starts as NaN, as mpfr_init2 leaves it).
class MpfrValue {
 public:
  explicit MpfrValue(mpfr_prec_t precision) { mpfr_init2(value_, precision); }
  ~MpfrValue() { mpfr_clear(value_); }
  MpfrValue(const MpfrValue&) = delete;
  MpfrValue& operator=(const MpfrValue&) = delete;
  mpfr_ptr get() { return value_; }
  mpfr_srcptr get() const { return value_; }

 private:
  mpfr_t value_;
};

// Bits of a variable that holds any exact sum of fewer than 2^64 values of T: every such sum is a
// multiple of 2^e_min (the smallest subnormal) below 2^(emax + 1 + 64), plus guard bits.
template <class T> constexpr mpfr_prec_t exact_sum_precision() {
  return (FloatTraits<T>::emax + 1 - FloatTraits<T>::min_subnormal_exp) + 64 + 3;
}

// Throws std::logic_error (a bug, never the user's input) when an operation claimed exact rounded.
inline void require_exact(int ternary, const char* who, const char* what) {
  if (ternary != 0) throw std::logic_error(std::string(who) + ": inexact " + what);
}

// The one rounding of an exact value to T, to nearest with ties to even (±Inf past the largest
// finite value, correctly rounded into the subnormal range: MPFR's own conversions).
template <class T> T round_to(mpfr_srcptr v) {
  if constexpr (sizeof(T) == sizeof(float)) return mpfr_get_flt(v, MPFR_RNDN);
  else return mpfr_get_d(v, MPFR_RNDN);
}

}  // namespace sumlab::reference
