// The linear recurrence in MPFR at kRecurrenceBits; see linear_recurrence.hpp for the precision
// argument.
#include "reference/linear_recurrence.hpp"

#include "reference/mpfr_value.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace sumlab::reference {

template <class T> ExactRecurrence exact_linear_recurrence(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size())
    throw std::invalid_argument("exact_linear_recurrence: " + std::to_string(a.size()) + " multipliers for " +
                                std::to_string(b.size()) + " terms");
  ExactRecurrence r;
  r.hi.resize(a.size());
  r.lo.resize(a.size());
  MpfrValue hv(kRecurrenceBits), tv(kRecurrenceBits);
  const mpfr_ptr h = hv.get(), t = tv.get();
  mpfr_set_zero(h, 1);
  for (std::size_t i = 0; i < a.size(); ++i) {
    mpfr_mul_d(h, h, double(a[i]), MPFR_RNDN);  // a float widens to double exactly
    mpfr_add_d(h, h, double(b[i]), MPFR_RNDN);
    const double hi = mpfr_get_d(h, MPFR_RNDN);
    double lo = 0;
    if (std::isfinite(hi)) {
      mpfr_sub_d(t, h, hi, MPFR_RNDN);  // exact: h and hi agree in their leading bits
      lo = mpfr_get_d(t, MPFR_RNDN);
    }
    r.hi[i] = hi;
    r.lo[i] = lo;
  }
  return r;
}

double recurrence_relative_error(double computed, double hi, double lo) {
  if (!std::isfinite(computed) || !std::isfinite(hi)) return std::numeric_limits<double>::quiet_NaN();
  const double diff = (computed - hi) - lo;
  if (hi == 0 && lo == 0) return computed == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::fabs(diff) / std::fabs(hi);
}

template ExactRecurrence exact_linear_recurrence<float>(std::span<const float>, std::span<const float>);
template ExactRecurrence exact_linear_recurrence<double>(std::span<const double>, std::span<const double>);

}  // namespace sumlab::reference
