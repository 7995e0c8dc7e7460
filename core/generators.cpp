// Host-only parts of the generators: name parsing, the array fill, and the Ogita-Rump-Oishi
// ill-conditioned generator (see core/generators.hpp for its definition and range).
#include "core/generators.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/metrics.hpp"

namespace sumlab {
namespace {

template <class E, std::size_t N>
E parse_name(std::string_view name, const std::array<E, N>& all, const char* what) {
  for (E e : all) {
    if (to_string(e) == name) return e;
  }
  std::string valid;
  for (E e : all) valid += (valid.empty() ? "" : ", ") + std::string(to_string(e));
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(name) +
                              "'; valid: " + valid);
}

// --- exact running sum as a floating-point expansion -------------------------------------------
// Shewchuk, "Adaptive precision floating-point arithmetic and fast robust geometric predicates"
// (1997): a nonoverlapping expansion (components in increasing magnitude, sum exact) grows by one
// double with a chain of error-free TwoSums; zero components are dropped. Exact as long as no
// TwoSum overflows (the generator keeps every value far below the range of double).
class Expansion {
 public:
  void add(double x) {
    std::size_t out = 0;
    double q = x;
    for (double c : components_) {
      const double s = q + c;
      const double bv = s - q;
      const double err = (q - (s - bv)) + (c - bv);  // TwoSum: s + err == q + c exactly
      q = s;
      if (err != 0.0) components_[out++] = err;
    }
    components_.resize(out);
    if (q != 0.0) components_.push_back(q);
  }
  // The sum to within a few ulps: components added from the smallest up.
  double approximate() const {
    double s = 0.0;
    for (double c : components_) s += c;
    return s;
  }

 private:
  std::vector<double> components_;
};

// Lemire's multiply-shift: a uniform integer in [0, bound) from 64 random bits (bias < 2^-32 for
// the bounds used here).
std::uint64_t below(std::uint64_t bits, std::uint64_t bound) {
  __extension__ typedef unsigned __int128 uint128;
  return static_cast<std::uint64_t>((static_cast<uint128>(bits) * bound) >> 64);
}

// r uniform in [-1, 1) on T's grid (2u - 1 is exact for u a multiple of 2^-p in [0, 1)).
template <class T> T signed_unit(std::uint64_t seed, std::uint64_t index, std::uint32_t stream) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return 2.0f * uniform_float(seed, index, stream) - 1.0f;
  } else {
    return 2.0 * uniform_double(seed, index, stream) - 1.0;
  }
}

template <class T> double achieved_condition(const std::vector<T>& x) {
  Superaccumulator<T> sum, sum_abs;
  for (T v : x) {
    sum.add(v);
    sum_abs.add(std::fabs(v));
  }
  return condition_number(double(sum_abs.round()), double(sum.round()));
}

namespace streams {
constexpr std::uint32_t exponent = generator_streams::ill_conditioned_first;
constexpr std::uint32_t first_half = exponent + 1;
constexpr std::uint32_t second_half = exponent + 2;
constexpr std::uint32_t sign = exponent + 3;
constexpr std::uint32_t permutation = exponent + 4;
}  // namespace streams

// Step 2 of the generator for a given e_end: fills x[n1 ..] from the exact sum of x[0 .. n1).
template <class T>
void cancel_running_sum(std::vector<T>& x, std::size_t n1, double half, double e_end,
                        std::uint64_t seed) {
  Expansion s;
  for (std::size_t i = 0; i < n1; ++i) s.add(double(x[i]));
  const std::size_t n2 = x.size() - n1;
  for (std::size_t j = 0; j < n2; ++j) {
    const double t = n2 > 1 ? double(j) / double(n2 - 1) : 1.0;
    const int e = static_cast<int>(std::lround(half + (e_end - half) * t));
    // |r| in [1/2, 1), random sign: the running sum lands at about 2^e.
    const T r = T(0.5) + T(0.5) * std::fabs(signed_unit<T>(seed, j, streams::second_half));
    const bool negative = (random_bits(seed, j, streams::sign) >> 63) != 0;
    const double target = std::ldexp(double(negative ? -r : r), e);  // exact
    const T v = static_cast<T>(target - s.approximate());
    x[n1 + j] = v;
    s.add(double(v));
  }
}

void validate_params(const DistributionSpec& spec) {
  auto finite = [](double v) { return std::isfinite(v); };
  switch (spec.kind) {
    case Distribution::uniform:
      if (!finite(spec.lo) || !finite(spec.hi) || !(spec.lo <= spec.hi))
        throw std::invalid_argument("uniform needs finite lo <= hi");
      break;
    case Distribution::normal:
    case Distribution::lognormal:
      if (!finite(spec.mu) || !finite(spec.sigma) || !(spec.sigma >= 0))
        throw std::invalid_argument(std::string(to_string(spec.kind)) +
                                    " needs finite mu and sigma >= 0");
      break;
    case Distribution::constant:
      if (std::isnan(spec.value)) throw std::invalid_argument("constant needs a value (not NaN)");
      break;
    case Distribution::cancellation:
    case Distribution::random_bits: break;
    case Distribution::ill_conditioned:
      if (!(spec.condition >= 1) || !finite(spec.condition))
        throw std::invalid_argument("ill_conditioned needs a finite condition >= 1");
      break;
  }
}

}  // namespace

Distribution parse_distribution(std::string_view name) {
  return parse_name(name, kAllDistributions, "distribution");
}

DistributionSpec parse_distribution_spec(std::string_view text) {
  DistributionSpec spec;
  const auto colon = text.find(':');
  spec.kind = parse_distribution(text.substr(0, colon));
  if (colon == std::string_view::npos) return spec;
  const std::string shown(text);
  if (spec.kind != Distribution::normal && spec.kind != Distribution::lognormal)
    throw std::invalid_argument("only normal:SIGMA and lognormal:SIGMA take a parameter ('" + shown + "')");
  const std::string sigma(text.substr(colon + 1));
  std::size_t used = 0;
  try {
    spec.sigma = std::stod(sigma, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (sigma.empty() || used != sigma.size()) throw std::invalid_argument("'" + shown + "' is not NAME[:SIGMA]");
  validate_params(spec);
  return spec;
}

Ordering parse_ordering(std::string_view name) {
  return parse_name(name, kAllOrderings, "ordering");
}

template <class T>
IllConditionedSum<T> generate_ill_conditioned(std::size_t n, double condition, std::uint64_t seed) {
  using Traits = FloatTraits<T>;
  if (!(condition >= 1) || !std::isfinite(condition))
    throw std::invalid_argument("ill_conditioned needs a finite condition >= 1");
  IllConditionedSum<T> out;
  out.requested = condition;
  out.values.resize(n);
  std::vector<T>& x = out.values;

  const double b = std::log2(condition);
  const double half = b / 2;
  const int top = static_cast<int>(std::lround(half)) + 1;
  const double log2n = std::log2(double(std::max<std::size_t>(n, 2)));
  // Largest partial sum magnitude: < n * 2^(top + 1); keep 2 more bits of headroom.
  auto too_large = [&](const char* why) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", condition);
    throw std::invalid_argument("ill_conditioned: condition " + std::string(text) +
                                " is too large for " + std::string(Traits::dtype) + " at n = " +
                                std::to_string(n) + " (" + why + ")");
  };
  if (double(top) + 3 + log2n > Traits::emax) too_large("the terms would overflow");

  // Step 1: random terms with exponents spread over [-b/2, b/2].
  const std::size_t n1 = n < 4 ? n : n / 2;
  for (std::size_t i = 0; i < n1; ++i) {
    int e;
    if (i == 0) e = top;
    else if (i + 1 == n1) e = -static_cast<int>(std::lround(half));
    else e = static_cast<int>(std::lround(uniform_double(seed, i, streams::exponent) * b - half));
    x[i] = std::ldexp(signed_unit<T>(seed, i, streams::first_half), e);  // exact unless subnormal
  }

  if (n1 < n) {
    // Step 2 with e_end from the first half's size, then up to 4 corrections: the measured ratio
    // tells how far the final |sum| is from sum|x| / condition.
    double first_abs = 0;
    for (std::size_t i = 0; i < n1; ++i) first_abs += std::fabs(double(x[i]));
    const double lowest = Traits::emin + Traits::precision + 2;  // keep the tail normal
    const double estimate = std::log2(2 * first_abs / condition);
    if (estimate < lowest - 3) too_large("the final sum would underflow");
    double e_end = std::clamp(estimate, lowest, half);
    double best_error = std::numeric_limits<double>::infinity();
    std::vector<T> best;
    for (int pass = 0; pass < 5; ++pass) {
      cancel_running_sum(x, n1, half, e_end, seed);
      const double achieved = achieved_condition(x);
      const double error = std::fabs(std::log2(achieved / condition));
      if (error < best_error) best_error = error, best = x;
      if (error < 1.0 || !std::isfinite(error)) break;
      const double next = std::clamp(e_end + std::log2(achieved / condition), lowest, half);
      if (next == e_end) break;
      e_end = next;
    }
    x = std::move(best);
  }

  // Step 3: Fisher-Yates.
  for (std::size_t i = n; i > 1; --i) {
    const std::size_t j = below(random_bits(seed, i - 1, streams::permutation), i);
    std::swap(x[i - 1], x[j]);
  }
  out.achieved = achieved_condition(x);
  return out;
}

template <class T>
std::vector<T> generate(const DistributionSpec& spec, std::uint64_t seed, std::size_t n) {
  validate_params(spec);
  if (spec.kind == Distribution::ill_conditioned) {
    return generate_ill_conditioned<T>(n, spec.condition, seed).values;
  }
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = generate_element<T>(spec, seed, i);
  return x;
}

template IllConditionedSum<float> generate_ill_conditioned<float>(std::size_t, double,
                                                                  std::uint64_t);
template IllConditionedSum<double> generate_ill_conditioned<double>(std::size_t, double,
                                                                    std::uint64_t);
template std::vector<float> generate<float>(const DistributionSpec&, std::uint64_t, std::size_t);
template std::vector<double> generate<double>(const DistributionSpec&, std::uint64_t, std::size_t);

}  // namespace sumlab
