// Exact prefix sums with one P-bit MPFR running sum; see prefix_sums.hpp for why every addition is
// exact and each prefix is rounded once.
#include "reference/prefix_sums.hpp"

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/float_traits.hpp"

namespace sumlab::reference {
namespace {

template <class T> constexpr mpfr_prec_t exact_precision() {
  return (FloatTraits<T>::emax + 1 - FloatTraits<T>::min_subnormal_exp) + 64 + 3;
}

template <class T> T round_to(mpfr_srcptr v) {
  if constexpr (sizeof(T) == sizeof(float)) return mpfr_get_flt(v, MPFR_RNDN);
  else return mpfr_get_d(v, MPFR_RNDN);
}

// Running exact sum with the IEEE special flags; restart() begins a new segment.
template <class T> class RunningSum {
 public:
  RunningSum() {
    mpfr_init2(sum_, exact_precision<T>());
    mpfr_init2(term_, FloatTraits<T>::precision);
    restart();
  }
  ~RunningSum() {
    mpfr_clear(sum_);
    mpfr_clear(term_);
  }
  RunningSum(const RunningSum&) = delete;
  RunningSum& operator=(const RunningSum&) = delete;

  void restart() {
    mpfr_set_zero(sum_, 1);
    nan_ = pos_inf_ = neg_inf_ = false;
    all_neg_zero_ = true;
  }
  T add(T x) {
    if (std::isnan(x)) nan_ = true;
    else if (std::isinf(x)) (x > 0 ? pos_inf_ : neg_inf_) = true;
    if (!(x == 0 && std::signbit(x))) all_neg_zero_ = false;
    if (std::isfinite(x) && x != 0) {
      if constexpr (sizeof(T) == sizeof(float)) mpfr_set_flt(term_, x, MPFR_RNDN);
      else mpfr_set_d(term_, x, MPFR_RNDN);  // exact: term_ has T's precision
      if (mpfr_add(sum_, sum_, term_, MPFR_RNDN) != 0) throw std::logic_error("exact_prefix_sums: inexact add");
    }
    if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<T>::quiet_NaN();
    if (pos_inf_) return std::numeric_limits<T>::infinity();
    if (neg_inf_) return -std::numeric_limits<T>::infinity();
    if (mpfr_zero_p(sum_)) return all_neg_zero_ ? T(-0.0) : T(0);
    return round_to<T>(sum_);
  }

 private:
  mpfr_t sum_, term_;
  bool nan_ = false, pos_inf_ = false, neg_inf_ = false, all_neg_zero_ = true;
};

template <class T> void shift_to_exclusive(std::vector<T>& out) {
  if (out.empty()) return;
  for (std::size_t i = out.size() - 1; i > 0; --i) out[i] = out[i - 1];
  out[0] = T(0);
}

}  // namespace

template <class T> std::vector<T> exact_prefix_sums(std::span<const T> x, bool inclusive) {
  std::vector<T> out(x.size());
  RunningSum<T> s;
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = s.add(x[i]);
  if (!inclusive) shift_to_exclusive(out);
  return out;
}

template <class T>
std::vector<T> exact_segmented_prefix_sums(std::span<const T> x, std::span<const std::uint8_t> heads, bool inclusive) {
  if (heads.size() != x.size())
    throw std::invalid_argument("exact_segmented_prefix_sums: " + std::to_string(heads.size()) + " head flags for " +
                                std::to_string(x.size()) + " values");
  std::vector<T> out(x.size());
  RunningSum<T> s;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (heads[i]) s.restart();
    out[i] = s.add(x[i]);
  }
  if (!inclusive) shift_to_exclusive(out);
  return out;
}

template std::vector<float> exact_prefix_sums<float>(std::span<const float>, bool);
template std::vector<double> exact_prefix_sums<double>(std::span<const double>, bool);
template std::vector<float> exact_segmented_prefix_sums<float>(std::span<const float>, std::span<const std::uint8_t>,
                                                               bool);
template std::vector<double> exact_segmented_prefix_sums<double>(std::span<const double>,
                                                                 std::span<const std::uint8_t>, bool);

}  // namespace sumlab::reference
