// Exact prefix sums with one P-bit MPFR running sum; see prefix_sums.hpp for why every addition is
// exact and each prefix is rounded once.
#include "reference/prefix_sums.hpp"


#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/float_traits.hpp"
#include "reference/mpfr_value.hpp"

namespace sumlab::reference {
namespace {

// Running exact sum with the IEEE special flags; restart() begins a new segment.
template <class T> class RunningSum {
 public:
  RunningSum() { restart(); }

  void restart() {
    mpfr_set_zero(sum_.get(), 1);
    nan_ = pos_inf_ = neg_inf_ = false;
    all_neg_zero_ = true;
  }
  T add(T x) {
    if (std::isnan(x)) nan_ = true;
    else if (std::isinf(x)) (x > 0 ? pos_inf_ : neg_inf_) = true;
    if (!(x == 0 && std::signbit(x))) all_neg_zero_ = false;
    if (std::isfinite(x) && x != 0) {
      if constexpr (sizeof(T) == sizeof(float)) mpfr_set_flt(term_.get(), x, MPFR_RNDN);
      else mpfr_set_d(term_.get(), x, MPFR_RNDN);  // exact: term_ has T's precision
      require_exact(mpfr_add(sum_.get(), sum_.get(), term_.get(), MPFR_RNDN), "exact_prefix_sums", "add");
    }
    if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<T>::quiet_NaN();
    if (pos_inf_) return std::numeric_limits<T>::infinity();
    if (neg_inf_) return -std::numeric_limits<T>::infinity();
    if (mpfr_zero_p(sum_.get())) return all_neg_zero_ ? T(-0.0) : T(0);
    return round_to<T>(sum_.get());
  }

 private:
  MpfrValue sum_{exact_sum_precision<T>()}, term_{FloatTraits<T>::precision};
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
