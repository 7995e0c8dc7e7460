// Exact sums with MPFR. See reference/mpfr_sum.hpp for the exactness argument; in short: every
// variable that holds a sum has P = (emax + 1 - e_min) + 64 + 3 bits, enough for the exact sum of
// any n < 2^64 values of T (an integer multiple of 2^e_min below 2^(emax+1+64)), so mpfr_sum and
// mpfr_add into it are exact, and the one rounding is the final mpfr_get_flt / mpfr_get_d.
//
// Order of work, per chunk of 2^12 elements (small enough to stay in L2):
//   1. each finite nonzero x_i is written straight into a one-limb MPFR value through MPFR's
//      documented custom interface (mpfr_custom_init_set: significand limb + exponent, no
//      allocation, exact: a 24- or 53-bit significand fits in a 64-bit limb), positive terms in one
//      array and negative terms in another;
//   2. mpfr_sum of each array into a variable wide enough for that chunk's exact sum (at most P
//      bits; usually far fewer, which is what keeps mpfr_sum fast), added to the running positive
//      and negative totals with mpfr_add at P bits (exact).
// The split by sign costs nothing (each term goes to exactly one array) and gives sum|x_i| =
// pos - neg for free. NaN, +-Inf and zeros never enter MPFR: they are counted on the side and
// the IEEE special rules are applied at the end.
#include "reference/mpfr_sum.hpp"

#include <mpfr.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <thread>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/float_traits.hpp"
#include "core/metrics.hpp"
#include "reference/mpfr_value.hpp"

namespace sumlab::reference {
namespace {

static_assert(GMP_NUMB_BITS == 64, "one 64-bit limb must hold a significand of float or double");

// The one rounding (round_to): RNDN into T, overflowing to +-Inf past the threshold (checked by
// hand-made cases in the test). An exact sum below the normal range is a multiple of 2^e_min and so
// exactly representable; rounding into the subnormal range is exercised by exact_moments' tests.
void require_exact(int ternary, const char* what) { reference::require_exact(ternary, "mpfr_sum", what); }

// The exact sums of the positive and of the negative terms, plus what was seen on the side.
template <class T> struct ExactParts {
  MpfrValue pos{exact_sum_precision<T>()};
  MpfrValue neg{exact_sum_precision<T>()};
  std::size_t n = 0;
  bool any_nan = false, any_pos_inf = false, any_neg_inf = false;
  bool all_neg_zero = true;  // every input is -0 (vacuously true when n == 0: see signed_zero)
};

// Per-thread buffers for one chunk: 2 x kChunk one-limb custom MPFR values (no allocation per
// call).
template <class T> struct Workspace {
  static constexpr std::size_t kChunk = std::size_t(1) << 12;
  std::vector<__mpfr_struct> items[2];
  std::vector<mp_limb_t> limbs[2];
  std::vector<mpfr_ptr> ptrs[2];
  MpfrValue partial{exact_sum_precision<T>()};

  Workspace() {
    for (int s = 0; s < 2; ++s) {
      items[s].resize(kChunk);
      limbs[s].resize(kChunk);
      ptrs[s].resize(kChunk);
      for (std::size_t i = 0; i < kChunk; ++i) ptrs[s][i] = &items[s][i];
    }
  }
  static Workspace& local() {
    thread_local Workspace w;
    return w;
  }
};

// x = sign * m * 2^q with m the integer significand (hidden bit included for normals):
// returns false for NaN/Inf/zero after recording them in `parts`.
template <class T>
bool decompose(T x, ExactParts<T>& parts, std::uint64_t& m, int& q, bool& negative) {
  using Traits = FloatTraits<T>;
  constexpr int kFracBits = Traits::precision - 1;
  constexpr int kTotalBits = int(sizeof(T) * 8);
  const std::uint64_t bits = to_bits(x);
  negative = (bits >> (kTotalBits - 1)) != 0;
  const std::uint64_t frac = bits & ((std::uint64_t(1) << kFracBits) - 1);
  const int biased = int((bits >> kFracBits) & ((std::uint64_t(1) << Traits::exponent_bits) - 1));
  const bool is_neg_zero = negative && biased == 0 && frac == 0;
  if (!is_neg_zero) parts.all_neg_zero = false;
  if (biased == (1 << Traits::exponent_bits) - 1) {
    if (frac != 0) parts.any_nan = true;
    else if (negative) parts.any_neg_inf = true;
    else parts.any_pos_inf = true;
    return false;
  }
  if (biased == 0) {
    if (frac == 0) return false;
    m = frac;
    q = Traits::min_subnormal_exp;
  } else {
    m = frac | (std::uint64_t(1) << kFracBits);
    q = biased + Traits::min_subnormal_exp - 1;
  }
  return true;
}

template <class T> void accumulate_serial(std::span<const T> x, ExactParts<T>& parts) {
  auto& w = Workspace<T>::local();
  mpfr_set_zero(parts.pos.get(), 1);
  mpfr_set_zero(parts.neg.get(), 1);
  parts.n = x.size();
  for (std::size_t begin = 0; begin < x.size(); begin += Workspace<T>::kChunk) {
    const std::size_t end = std::min(x.size(), begin + Workspace<T>::kChunk);
    std::size_t count[2] = {0, 0};
    // Lowest and highest bit of the chunk's terms, per sign, to size the chunk's partial sum.
    int lowest[2] = {std::numeric_limits<int>::max(), std::numeric_limits<int>::max()};
    int highest[2] = {std::numeric_limits<int>::min(), std::numeric_limits<int>::min()};
    for (std::size_t i = begin; i < end; ++i) {
      std::uint64_t m;
      int q;
      bool negative;
      if (!decompose(x[i], parts, m, q, negative)) continue;
      // Normalise m into the limb's top bit: value = (limb / 2^64) * 2^(q + bit_length(m)).
      const int length = 64 - std::countl_zero(m);
      const int s = negative ? 1 : 0;
      const std::size_t k = count[s]++;
      lowest[s] = std::min(lowest[s], q);
      highest[s] = std::max(highest[s], q + length);
      w.limbs[s][k] = m << (64 - length);
      mpfr_custom_init_set(&w.items[s][k], negative ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND,
                           mpfr_exp_t(q + length), 64, &w.limbs[s][k]);
    }
    for (int s = 0; s < 2; ++s) {
      if (count[s] == 0) continue;
      // The chunk's sum is a multiple of 2^lowest below 2^(highest + 13) (count <= 2^12), so this
      // many bits hold it exactly; most data spans far fewer bits than P, and mpfr_sum's work
      // grows with the output precision. (The ternary check below would catch a mistake here.)
      const mpfr_prec_t bits = mpfr_prec_t(highest[s] - lowest[s]) + 13 + 2;
      mpfr_set_prec(w.partial.get(), std::min(bits, exact_sum_precision<T>()));
      require_exact(mpfr_sum(w.partial.get(), w.ptrs[s].data(), count[s], MPFR_RNDN), "chunk sum");
      mpfr_ptr total = s ? parts.neg.get() : parts.pos.get();
      require_exact(mpfr_add(total, total, w.partial.get(), MPFR_RNDN), "chunk add");
    }
  }
}

// Large inputs are split over threads: each part's exact sums are exact, and adding exact values
// at P bits is exact, so the split changes nothing but the time (Workspace is thread-local).
template <class T> void accumulate(std::span<const T> x, ExactParts<T>& parts) {
  constexpr std::size_t kMinPerThread = std::size_t{1} << 21;
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>({hw, 32, x.size() / kMinPerThread});
  if (threads <= 1) {
    accumulate_serial(x, parts);
    return;
  }
  std::vector<ExactParts<T>> partial(threads);
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(threads);
  const std::size_t step = (x.size() + threads - 1) / threads;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        const std::size_t begin = std::min(x.size(), t * step), end = std::min(x.size(), begin + step);
        accumulate_serial(x.subspan(begin, end - begin), partial[t]);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  mpfr_set_zero(parts.pos.get(), 1);
  mpfr_set_zero(parts.neg.get(), 1);
  parts.n = 0;
  for (const auto& p : partial) {
    require_exact(mpfr_add(parts.pos.get(), parts.pos.get(), p.pos.get(), MPFR_RNDN), "thread add");
    require_exact(mpfr_add(parts.neg.get(), parts.neg.get(), p.neg.get(), MPFR_RNDN), "thread add");
    parts.n += p.n;
    parts.any_nan |= p.any_nan;
    parts.any_pos_inf |= p.any_pos_inf;
    parts.any_neg_inf |= p.any_neg_inf;
    parts.all_neg_zero &= p.all_neg_zero;
  }
}

// The IEEE special result, if any: NaN, +-Inf; nothing (false) when all inputs are finite.
template <class T> bool special_sum(const ExactParts<T>& parts, T& out) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  if (parts.any_nan || (parts.any_pos_inf && parts.any_neg_inf)) {
    out = std::numeric_limits<T>::quiet_NaN();
  } else if (parts.any_pos_inf) {
    out = inf;
  } else if (parts.any_neg_inf) {
    out = -inf;
  } else {
    return false;
  }
  return true;
}

// Exact sum pos + neg of finite inputs (P bits, exact); `out` must have exact_sum_precision<T>().
template <class T> void exact_total(const ExactParts<T>& parts, mpfr_ptr out) {
  require_exact(mpfr_add(out, parts.pos.get(), parts.neg.get(), MPFR_RNDN), "total");
}

// Zero results carry the IEEE sign: -0 only when every one of n > 0 inputs is -0.
template <class R, class T> R signed_zero(const ExactParts<T>& parts) {
  return parts.n > 0 && parts.all_neg_zero ? -R(0) : R(0);
}

template <class R, class T> R rounded_sum(std::span<const T> x) {
  ExactParts<T> parts;
  accumulate(x, parts);
  T special;
  if (special_sum(parts, special)) return R(special);
  MpfrValue total(exact_sum_precision<T>());
  exact_total(parts, total.get());
  if (mpfr_zero_p(total.get())) return signed_zero<R>(parts);
  return round_to<R>(total.get());
}

}  // namespace

template <class T> T correctly_rounded_sum(std::span<const T> x) { return rounded_sum<T>(x); }

template <class T> double exact_sum_as_double(std::span<const T> x) {
  return rounded_sum<double>(x);
}

double correctly_rounded_sum_in(std::span<const float> x, NarrowFormat f) {
  ExactParts<float> parts;
  accumulate(x, parts);
  float special;
  if (special_sum(parts, special)) return special;
  MpfrValue total(exact_sum_precision<float>());
  exact_total(parts, total.get());
  if (mpfr_zero_p(total.get())) return signed_zero<double>(parts);
  // Below the normal range the spacing is fixed: round to a multiple of 2^(emin - p + 1); above
  // it, to p significant bits. MPFR's exponent of v is e with 2^(e-1) <= |v| < 2^e.
  MpfrValue r(exact_sum_precision<float>());
  const mpfr_exp_t e = mpfr_get_exp(total.get());
  if (e - 1 < f.emin) {
    const int quantum = f.emin - f.precision + 1;
    mpfr_div_2si(r.get(), total.get(), quantum, MPFR_RNDN);  // exact: a power of two
    mpfr_rint(r.get(), r.get(), MPFR_RNDN);                  // ties to even
    mpfr_mul_2si(r.get(), r.get(), quantum, MPFR_RNDN);
  } else {
    MpfrValue p(f.precision);
    mpfr_set(p.get(), total.get(), MPFR_RNDN);
    mpfr_set(r.get(), p.get(), MPFR_RNDN);
  }
  const double v = mpfr_get_d(r.get(), MPFR_RNDN);  // exact: at most p <= 24 bits
  const double max = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  if (std::fabs(v) > max) return v > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  if (v == 0) return mpfr_sgn(total.get()) < 0 ? -0.0 : 0.0;  // rounded to zero: the exact sum's sign
  return v;
}

template <class T> ErrorMetrics measure_parts(const ExactParts<T>& parts, T computed) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr mpfr_prec_t P = exact_sum_precision<T>();
  ErrorMetrics m;

  m.result_finite = std::isfinite(computed);
  T special;
  if (special_sum(parts, special)) {
    m.exact = m.rounded = double(special);
    m.abs_error = m.rel_error = m.ulps = m.correct_bits = nan;
    m.sum_abs = m.condition = nan;
    m.special = m.input_special = true;
    return m;
  }

  MpfrValue total(P), sum_abs(P), ratio(53);
  exact_total(parts, total.get());
  require_exact(mpfr_sub(sum_abs.get(), parts.pos.get(), parts.neg.get(), MPFR_RNDN), "sum_abs");
  const bool zero = mpfr_zero_p(total.get()) != 0;
  const T rounded = zero ? signed_zero<T>(parts) : round_to<T>(total.get());
  m.exact = zero ? double(rounded) : mpfr_get_d(total.get(), MPFR_RNDN);
  m.rounded = double(rounded);
  m.exact_overflows = !std::isfinite(rounded);
  m.sum_abs = mpfr_get_d(sum_abs.get(), MPFR_RNDN);
  if (zero) {
    m.condition = condition_number(m.sum_abs, 0.0);
  } else {
    // One correctly rounded division of the two exact values (53 bits, then exact to double
    // unless the ratio leaves double's range).
    mpfr_div(ratio.get(), sum_abs.get(), total.get(), MPFR_RNDN);
    mpfr_abs(ratio.get(), ratio.get(), MPFR_RNDN);
    m.condition = mpfr_get_d(ratio.get(), MPFR_RNDN);
  }

  if (!std::isfinite(computed)) {
    m.abs_error = m.rel_error = m.ulps = m.correct_bits = nan;
    m.special = true;
    return m;
  }

  // diff = computed - exact, exact: both are integer multiples of 2^e_min below 2^(P-2).
  MpfrValue diff(P + 2);
  mpfr_set_d(diff.get(), double(computed), MPFR_RNDN);  // exact: float and double fit in double
  require_exact(mpfr_sub(diff.get(), diff.get(), total.get(), MPFR_RNDN), "error");
  mpfr_abs(diff.get(), diff.get(), MPFR_RNDN);
  m.abs_error = mpfr_get_d(diff.get(), MPFR_RNDN);

  if (zero) {
    m.rel_error = mpfr_zero_p(diff.get()) ? 0.0 : std::numeric_limits<double>::infinity();
  } else {
    mpfr_div(ratio.get(), diff.get(), total.get(), MPFR_RNDN);
    mpfr_abs(ratio.get(), ratio.get(), MPFR_RNDN);
    m.rel_error = mpfr_get_d(ratio.get(), MPFR_RNDN);
  }
  m.correct_bits = correct_bits(m.rel_error, FloatTraits<T>::precision);

  // ulp_T(rounded) is a power of two 2^k (ulp(max) when the exact sum overflowed T), so the
  // division is an exact exponent shift and ulps is rounded once.
  const T base = std::isfinite(rounded) ? rounded : std::numeric_limits<T>::max();
  const int k = std::ilogb(ulp(base));
  MpfrValue scaled(P + 2);
  mpfr_div_2si(scaled.get(), diff.get(), k, MPFR_RNDN);
  m.ulps = mpfr_get_d(scaled.get(), MPFR_RNDN);
  return m;
}

template <class T> ErrorMetrics measure(std::span<const T> x, T computed) {
  ExactParts<T> parts;
  accumulate(x, parts);
  return measure_parts(parts, computed);
}

template <class T> struct ExactSum<T>::Impl {
  ExactParts<T> parts;
};
template <class T> ExactSum<T>::ExactSum(std::span<const T> x) : impl_(std::make_unique<Impl>()) {
  accumulate(x, impl_->parts);
  rounded_ = measure_parts(impl_->parts, T(0)).rounded;
}
// The exact value of carry-normalised limbs (each a 64-bit integer times a power of two: exact in
// a one-limb MPFR value, and their sum exact at P bits).
template <class T> void set_from_limbs(mpfr_ptr out, const Superaccumulator<T>& acc) {
  using A = Superaccumulator<T>;
  mpfr_set_zero(out, 1);
  MpfrValue digit(64);
  const typename A::Limbs limbs = acc.limbs();
  for (int k = 0; k < A::num_limbs; ++k) {
    if (limbs[k] == 0) continue;
    require_exact(mpfr_set_si_2exp(digit.get(), static_cast<long>(limbs[k]), k * A::limb_bits + A::min_exponent, MPFR_RNDN),
                  "limb");
    require_exact(mpfr_add(out, out, digit.get(), MPFR_RNDN), "limb add");
  }
}

template <class T>
ExactSum<T>::ExactSum(const Superaccumulator<T>& sum, const Superaccumulator<T>& sum_abs) : impl_(std::make_unique<Impl>()) {
  ExactParts<T>& p = impl_->parts;
  MpfrValue s(exact_sum_precision<T>()), a(exact_sum_precision<T>());
  set_from_limbs(s.get(), sum);
  set_from_limbs(a.get(), sum_abs);
  require_exact(mpfr_add(p.pos.get(), a.get(), s.get(), MPFR_RNDN), "positive part");
  require_exact(mpfr_sub(p.neg.get(), s.get(), a.get(), MPFR_RNDN), "negative part");
  mpfr_div_2ui(p.pos.get(), p.pos.get(), 1, MPFR_RNDN);  // exact: a power of two
  mpfr_div_2ui(p.neg.get(), p.neg.get(), 1, MPFR_RNDN);
  const SpecialCounts& c = sum.specials();
  p.n = static_cast<std::size_t>(c.count);
  p.any_nan = c.nan != 0;
  p.any_pos_inf = c.pos_inf != 0;
  p.any_neg_inf = c.neg_inf != 0;
  p.all_neg_zero = c.all_negative_zero;
  rounded_ = measure_parts(p, T(0)).rounded;
}

template <class T> bool ExactSum<T>::same_exact(const ExactSum& other) const {
  const ExactParts<T>& a = impl_->parts;
  const ExactParts<T>& b = other.impl_->parts;
  return mpfr_equal_p(a.pos.get(), b.pos.get()) != 0 && mpfr_equal_p(a.neg.get(), b.neg.get()) != 0 && a.n == b.n &&
         a.any_nan == b.any_nan && a.any_pos_inf == b.any_pos_inf && a.any_neg_inf == b.any_neg_inf &&
         a.all_neg_zero == b.all_neg_zero;
}

template <class T> ExactSum<T>::~ExactSum() = default;
template <class T> ErrorMetrics ExactSum<T>::measure(T computed) const {
  return measure_parts(impl_->parts, computed);
}
template class ExactSum<float>;
template class ExactSum<double>;

template float correctly_rounded_sum<float>(std::span<const float>);
template double correctly_rounded_sum<double>(std::span<const double>);
template double exact_sum_as_double<float>(std::span<const float>);
template double exact_sum_as_double<double>(std::span<const double>);
template ErrorMetrics measure<float>(std::span<const float>, float);
template ErrorMetrics measure<double>(std::span<const double>, double);

}  // namespace sumlab::reference
