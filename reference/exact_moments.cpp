// Exact moments with MPFR; the argument for exactness and correct rounding is in the header.
//
// Order of work, per chunk of 2^12 elements: each finite x_i is written into a one-limb MPFR value
// and x_i^2 (exact, an unsigned 128-bit integer times a power of two) into a two-limb one, through
// MPFR's documented custom interface (no allocation); mpfr_sum of each array into a variable wide
// enough for that chunk's exact sum; mpfr_add into the running S1, S2 (exact at their precisions).
// Then N = n*S2 - S1^2 exactly, and four round-to-odd divisions.
#include "reference/exact_moments.hpp"


#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/float_traits.hpp"
#include "reference/mpfr_value.hpp"

namespace sumlab::reference {
namespace {

static_assert(GMP_NUMB_BITS == 64, "limbs are 64 bits");
__extension__ typedef unsigned __int128 uint128;

// S1 holds any exact sum of n < 2^64 values: multiples of 2^e_min below 2^(emax+1+64).
template <class T> constexpr mpfr_prec_t s1_precision() { return exact_sum_precision<T>(); }
// S2: multiples of 2^(2 e_min) below 2^(2 emax + 2 + 64).
template <class T> constexpr mpfr_prec_t s2_precision() {
  return 2 * (FloatTraits<T>::emax + 1 - FloatTraits<T>::min_subnormal_exp) + 64 + 3;
}
// N, n*S2 and S1^2: multiples of 2^(2 e_min); n*S2 < 2^(64 + bits of S2), S1^2 < 2^(2 bits of S1).
template <class T> constexpr mpfr_prec_t numerator_precision() {
  return std::max(s2_precision<T>() + 64, 2 * s1_precision<T>()) + 2;
}

void require_exact(int ternary, const char* what) { reference::require_exact(ternary, "exact_moments", what); }

struct Workspace {
  static constexpr std::size_t kChunk = std::size_t(1) << 12;
  std::vector<__mpfr_struct> items[2];       // [0]: x_i, [1]: x_i^2
  std::vector<mp_limb_t> limbs[2];           // one limb per x_i, two per x_i^2
  std::vector<mpfr_ptr> ptrs[2];
  MpfrValue partial{64};

  Workspace() {
    for (int s = 0; s < 2; ++s) {
      items[s].resize(kChunk);
      limbs[s].resize(kChunk * std::size_t(s + 1));
      ptrs[s].resize(kChunk);
      for (std::size_t i = 0; i < kChunk; ++i) ptrs[s][i] = &items[s][i];
    }
  }
  static Workspace& local() {
    thread_local Workspace w;
    return w;
  }
};

// Round-to-odd quotient at `out`'s precision: truncate, and if inexact make the last bit 1.
void divide_round_to_odd(mpfr_ptr out, mpfr_srcptr a, mpfr_srcptr b) {
  const int ternary = mpfr_div(out, a, b, MPFR_RNDZ);
  if (ternary != 0 && mpfr_min_prec(out) < mpfr_get_prec(out)) {
    if (mpfr_sgn(out) > 0) mpfr_nextabove(out);
    else mpfr_nextbelow(out);
  }
}

template <class T> void set_both(mpfr_srcptr v, T& t, double& d) {
  t = round_to<T>(v);
  d = mpfr_get_d(v, MPFR_RNDN);
}

}  // namespace

template <class T> ExactMoments<T> exact_moments(std::span<const T> x) {
  using Traits = FloatTraits<T>;
  constexpr int kFracBits = Traits::precision - 1;
  constexpr int kTotalBits = int(sizeof(T) * 8);
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();

  ExactMoments<T> r;
  r.n = x.size();
  auto set_all = [&r](double mean, double mean_square, double other) {
    r.mean = T(mean), r.mean_d = mean;
    r.mean_square = T(mean_square), r.mean_square_d = mean_square;
    r.variance = r.m2 = T(other), r.variance_d = r.m2_d = other;
  };
  if (x.empty()) {
    set_all(nan, nan, nan);
    return r;
  }

  auto& w = Workspace::local();
  MpfrValue s1(s1_precision<T>()), s2(s2_precision<T>());
  mpfr_set_zero(s1.get(), 1);
  mpfr_set_zero(s2.get(), 1);
  bool any_nan = false, pos_inf = false, neg_inf = false, all_neg_zero = true;

  for (std::size_t begin = 0; begin < x.size(); begin += Workspace::kChunk) {
    const std::size_t end = std::min(x.size(), begin + Workspace::kChunk);
    std::size_t count = 0;
    int lowest = std::numeric_limits<int>::max(), highest = std::numeric_limits<int>::min();
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t bits = to_bits(x[i]);
      const bool negative = (bits >> (kTotalBits - 1)) != 0;
      const std::uint64_t frac = bits & ((std::uint64_t(1) << kFracBits) - 1);
      const int biased = int((bits >> kFracBits) & ((1u << Traits::exponent_bits) - 1));
      if (!(negative && biased == 0 && frac == 0)) all_neg_zero = false;
      if (biased == (1 << Traits::exponent_bits) - 1) {
        if (frac != 0) any_nan = true;
        else (negative ? neg_inf : pos_inf) = true;
        continue;
      }
      std::uint64_t m;
      int q;
      if (biased == 0) {
        if (frac == 0) continue;
        m = frac, q = Traits::min_subnormal_exp;
      } else {
        m = frac | (std::uint64_t(1) << kFracBits), q = biased + Traits::min_subnormal_exp - 1;
      }
      const std::size_t k = count++;
      lowest = std::min(lowest, q);
      // x = (limb / 2^64) * 2^(q + len), len = bit length of m.
      const int len = 64 - std::countl_zero(m);
      highest = std::max(highest, q + len);
      w.limbs[0][k] = m << (64 - len);
      mpfr_custom_init_set(&w.items[0][k], negative ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND,
                           mpfr_exp_t(q + len), 64, &w.limbs[0][k]);
      // x^2 = m^2 * 2^(2q) = (sig / 2^128) * 2^(2q + len2), sig = m^2 normalised to bit 127.
      const uint128 sq = uint128(m) * m;
      const int len2 = 128 - (std::uint64_t(sq >> 64) != 0
                                  ? std::countl_zero(std::uint64_t(sq >> 64))
                                  : 64 + std::countl_zero(std::uint64_t(sq)));
      const uint128 sig = sq << (128 - len2);
      w.limbs[1][2 * k] = mp_limb_t(sig);
      w.limbs[1][2 * k + 1] = mp_limb_t(sig >> 64);
      mpfr_custom_init_set(&w.items[1][k], MPFR_REGULAR_KIND, mpfr_exp_t(2 * q + len2), 128,
                           &w.limbs[1][2 * k]);
    }
    if (count == 0) continue;
    // Chunk sums: multiples of 2^lowest (2^(2 lowest)) below 2^(highest + 13) (2^(2 highest + 13)).
    mpfr_set_prec(w.partial.get(), mpfr_prec_t(highest - lowest) + 13 + 2);
    require_exact(mpfr_sum(w.partial.get(), w.ptrs[0].data(), count, MPFR_RNDN), "chunk S1");
    require_exact(mpfr_add(s1.get(), s1.get(), w.partial.get(), MPFR_RNDN), "S1");
    mpfr_set_prec(w.partial.get(), 2 * mpfr_prec_t(highest - lowest) + 13 + 2);
    require_exact(mpfr_sum(w.partial.get(), w.ptrs[1].data(), count, MPFR_RNDN), "chunk S2");
    require_exact(mpfr_add(s2.get(), s2.get(), w.partial.get(), MPFR_RNDN), "S2");
  }

  if (any_nan || (pos_inf && neg_inf)) {
    set_all(nan, nan, nan);
    return r;
  }
  if (pos_inf || neg_inf) {
    set_all(pos_inf ? inf : -inf, inf, nan);
    return r;
  }

  constexpr mpfr_prec_t kOdd = 53 + 2;  // round-to-odd precision: p + 2 for double (and float)
  MpfrValue n(64), n2(128), q(kOdd);
  require_exact(mpfr_set_ui(n.get(), static_cast<unsigned long>(x.size()), MPFR_RNDN), "n");
  require_exact(mpfr_sqr(n2.get(), n.get(), MPFR_RNDN), "n^2");

  // mean = S1 / n; the exact zero keeps the IEEE sum's sign.
  if (mpfr_zero_p(s1.get())) {
    const double z = all_neg_zero ? -0.0 : 0.0;
    r.mean = T(z), r.mean_d = z;
  } else {
    divide_round_to_odd(q.get(), s1.get(), n.get());
    set_both(q.get(), r.mean, r.mean_d);
  }
  // mean_square = S2 / n (S2 >= 0; an exact 0 gives +0).
  divide_round_to_odd(q.get(), s2.get(), n.get());
  set_both(q.get(), r.mean_square, r.mean_square_d);

  // N = n*S2 - S1^2, exact (>= 0 by Cauchy-Schwarz).
  MpfrValue num(numerator_precision<T>()), s1sq(numerator_precision<T>());
  require_exact(mpfr_mul_ui(num.get(), s2.get(), static_cast<unsigned long>(x.size()), MPFR_RNDN),
                "n*S2");
  require_exact(mpfr_sqr(s1sq.get(), s1.get(), MPFR_RNDN), "S1^2");
  require_exact(mpfr_sub(num.get(), num.get(), s1sq.get(), MPFR_RNDN), "N");
  if (mpfr_sgn(num.get()) < 0) throw std::logic_error("exact_moments: negative n*M2");
  mpfr_abs(num.get(), num.get(), MPFR_RNDN);  // an exact 0 becomes +0

  divide_round_to_odd(q.get(), num.get(), n.get());  // M2 = N / n
  set_both(q.get(), r.m2, r.m2_d);
  divide_round_to_odd(q.get(), num.get(), n2.get());  // variance = N / n^2
  set_both(q.get(), r.variance, r.variance_d);
  return r;
}

template <class T>
std::vector<ExactMoments<T>> exact_row_moments(std::span<const T> data, std::size_t rows,
                                               std::size_t cols) {
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols)
    throw std::invalid_argument("exact_row_moments: rows * cols overflows");
  if (data.size() != rows * cols) {
    throw std::invalid_argument("exact_row_moments: data has " + std::to_string(data.size()) +
                                " elements, expected rows * cols = " + std::to_string(rows) +
                                " * " + std::to_string(cols));
  }
  std::vector<ExactMoments<T>> out;
  out.reserve(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    out.push_back(exact_moments<T>(data.subspan(i * cols, cols)));
  }
  return out;
}

template ExactMoments<float> exact_moments<float>(std::span<const float>);
template ExactMoments<double> exact_moments<double>(std::span<const double>);
template std::vector<ExactMoments<float>> exact_row_moments<float>(std::span<const float>,
                                                                   std::size_t, std::size_t);
template std::vector<ExactMoments<double>> exact_row_moments<double>(std::span<const double>,
                                                                     std::size_t, std::size_t);

}  // namespace sumlab::reference
