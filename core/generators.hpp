#pragma once
// Input generators: every element is a pure function of (distribution, seed, index), computed
// with integer hashing (core/counter_rng.hpp) and +, -, *, /, sqrt and the portable log/exp
// (core/portable_math.hpp) in double, then rounded once to T. So generate_element gives the same
// bits on the CPU (built with -ffp-contract=off) and in a CUDA kernel (built with --fmad=false),
// and element i is the same whatever n: a GPU study can generate its input in place.
// The one exception is ill_conditioned (Ogita, Rump & Oishi's generator), a host-only function of
// (seed, n, condition) whose elements depend on n; see generate_ill_conditioned.
//
// Orderings rearrange a generated array (stable, deterministic) to study order effects.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/hd.hpp"
#include "core/portable_math.hpp"

namespace sumlab {

enum class Distribution { uniform, normal, constant, cancellation, lognormal, ill_conditioned, random_bits };

inline constexpr std::array<Distribution, 7> kAllDistributions{
    Distribution::uniform,   Distribution::normal,          Distribution::constant,   Distribution::cancellation,
    Distribution::lognormal, Distribution::ill_conditioned, Distribution::random_bits};

constexpr std::string_view to_string(Distribution d) {
  switch (d) {
    case Distribution::uniform: return "uniform";
    case Distribution::normal: return "normal";
    case Distribution::constant: return "constant";
    case Distribution::cancellation: return "cancellation";
    case Distribution::lognormal: return "lognormal";
    case Distribution::ill_conditioned: return "ill_conditioned";
    case Distribution::random_bits: return "random_bits";
  }
  return "?";
}

// One line per distribution, for --help texts and report captions.
constexpr std::string_view describe(Distribution d) {
  switch (d) {
    case Distribution::uniform: return "uniform in [lo, hi), computed in double, rounded to T";
    case Distribution::normal: return "normal(mu, sigma) by Marsaglia's polar method";
    case Distribution::constant: return "every element equal to value rounded to T";
    case Distribution::cancellation:
      return "random signs, magnitudes log-uniform over 2^-20 .. 2^20: the sum cancels";
    case Distribution::lognormal: return "exp(normal(mu, sigma))";
    case Distribution::ill_conditioned:
      return "Ogita-Rump-Oishi: condition sum|x|/|sum x| near the requested one (depends on n)";
    case Distribution::random_bits:
      return "every finite bit pattern of T equally likely but exponent 0 (twice): the whole exponent range";
  }
  return "?";
}

// Parses a name of to_string(Distribution); throws std::invalid_argument listing the valid names.
Distribution parse_distribution(std::string_view name);

// Parameters of every distribution (each kind reads only its own).
struct DistributionSpec {
  Distribution kind = Distribution::uniform;
  double lo = 0, hi = 1;         // uniform: [lo, hi)
  double mu = 0, sigma = 1;      // normal; lognormal (of the underlying normal)
  double value = 0.1;            // constant
  double condition = 1e10;       // ill_conditioned: requested sum|x| / |sum x|
};

// "NAME[:SIGMA]", as the bench and verify name their inputs: a distribution, normal and lognormal
// with their sigma (lognormal:12 spans about 2^-200 .. 2^200 at 2^30 elements); the other
// parameters at their defaults. Throws std::invalid_argument for an unknown name, a parameter on
// another kind, or a sigma that is not a finite number >= 0.
DistributionSpec parse_distribution_spec(std::string_view text);

// Streams of counter_rng used by each distribution (documented so other code can avoid them).
namespace generator_streams {
constexpr std::uint32_t uniform = 0;
constexpr std::uint32_t cancellation_sign = 1;
constexpr std::uint32_t cancellation_magnitude = 2;
constexpr std::uint32_t normal_first = 16;  // attempt a of the polar method: 16 + 2a, 17 + 2a
constexpr std::uint32_t normal_attempts = 64;
constexpr std::uint32_t ill_conditioned_first = 256;  // 256 .. 260, host only
constexpr std::uint32_t random_bits = 1000;
}  // namespace generator_streams

// A standard normal deviate for (seed, index) by Marsaglia's polar method: draw (u, v) uniform in
// [-1, 1)^2 until 0 < s = u^2 + v^2 < 1, return u sqrt(-2 ln(s) / s). Attempt a draws from streams
// 16 + 2a and 17 + 2a of the same (seed, index), so the loop stays a pure function. Each attempt
// succeeds with probability pi/4; after 64 failures (probability < 10^-42) it returns 0.
SUMLAB_HD inline double standard_normal(std::uint64_t seed, std::uint64_t index) {
  for (std::uint32_t a = 0; a < generator_streams::normal_attempts; ++a) {
    const std::uint32_t stream = generator_streams::normal_first + 2 * a;
    const double u = 2.0 * uniform_double(seed, index, stream) - 1.0;
    const double v = 2.0 * uniform_double(seed, index, stream + 1) - 1.0;
    const double s = u * u + v * v;
    if (s < 1.0 && s > 0.0) return u * portable_sqrt(-2.0 * portable_log(s) / s);
  }
  return 0.0;
}

// Element `index` of the distribution, for any kind but ill_conditioned (which returns NaN here:
// its elements are not independent; use generate / generate_ill_conditioned on the host).
// Every value is computed in double and rounded once to T (so a float uniform may round up to hi).
//   uniform:      lo + (hi - lo) * u, u = uniform_double (53 bits)
//   normal:       mu + sigma * standard_normal
//   constant:     value
//   cancellation: (-1)^b * 2^(40 u - 20), the sign bit b and u from two streams; the magnitude is
//                 portable_exp((40 u - 20) ln 2): terms spread over 12 decades. Mean 0, so the sum
//                 of n terms is ~sqrt(n) times a large term while sum |x_i| grows like n: condition
//                 ~0.27 sqrt(n) / |Z| with Z standard normal (measured median 0.3 sqrt(n) over 41
//                 seeds; heavy-tailed: some seeds give 100x more).
//   lognormal:    portable_exp(mu + sigma * standard_normal)
//   random_bits:  T's bit pattern from random_bits (its low bits for float), an exponent field of all
//                 ones (Inf, NaN) folded to 0 (zero, subnormal): not rounded from a double. Half the
//                 elements exceed 2^64 in magnitude (float) and sums overflow to +-Inf: this is the
//                 input an exact sum must survive, not a model of data.
template <class T>
SUMLAB_HD T generate_element(const DistributionSpec& spec, std::uint64_t seed,
                             std::uint64_t index) {
  double x = 0.0;
  switch (spec.kind) {
    case Distribution::uniform:
      x = spec.lo + (spec.hi - spec.lo) * uniform_double(seed, index, generator_streams::uniform);
      break;
    case Distribution::normal:
      x = spec.mu + spec.sigma * standard_normal(seed, index);
      break;
    case Distribution::constant:
      x = spec.value;
      break;
    case Distribution::cancellation: {
      const double ln2 = double_from_bits(0x3fe62e42fefa39efull);
      const double u = uniform_double(seed, index, generator_streams::cancellation_magnitude);
      const double magnitude = portable_exp((40.0 * u - 20.0) * ln2);
      const bool negative =
          (random_bits(seed, index, generator_streams::cancellation_sign) >> 63) != 0;
      x = negative ? -magnitude : magnitude;
      break;
    }
    case Distribution::lognormal:
      x = portable_exp(spec.mu + spec.sigma * standard_normal(seed, index));
      break;
    case Distribution::ill_conditioned:
      x = double_from_bits(detail::kNanBits);
      break;
    case Distribution::random_bits: {
      constexpr int fraction_bits = sizeof(T) == 4 ? 23 : 52;
      constexpr std::uint64_t exponent_ones = (sizeof(T) == 4 ? 0xffull : 0x7ffull) << fraction_bits;
      std::uint64_t b = random_bits(seed, index, generator_streams::random_bits);
      if constexpr (sizeof(T) == 4) b &= 0xffffffffull;
      if ((b & exponent_ones) == exponent_ones) b &= ~exponent_ones;
      if constexpr (sizeof(T) == 4) return float_from_bits(static_cast<std::uint32_t>(b));
      else return double_from_bits(b);
    }
  }
  return static_cast<T>(x);
}

// An Ogita-Rump-Oishi ill-conditioned sum and the condition number it achieved.
template <class T> struct IllConditionedSum {
  std::vector<T> values;
  double requested = 0;  // the condition asked for
  double achieved = 0;   // sum|x_i| / |sum x_i|, both sums exact (core/exact_sum.hpp)
};

// Ogita, Rump & Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005,
// Algorithm 6.1 (GenDot) adapted to sums; host only, a pure function of (seed, n, condition).
// With b = log2(condition):
//   1. The first floor(n/2) values are r * 2^e, r uniform in [-1, 1) (a T value), e a uniform
//      integer in [-b/2, b/2] (the first one b/2 + 1 and the last one -b/2, so the whole range is
//      present): large terms of both signs.
//   2. The remaining values cancel the running exact sum S: x_j = fl(r_j 2^(e_j) - S), |r_j| in
//      [1/2, 1), e_j decreasing linearly from b/2 to e_end. Each step leaves S ~ r_j 2^(e_j), so
//      the final |sum| ~ 2^e_end while sum|x| ~ 2^(b/2) * (number of large terms): e_end is set so
//      that the ratio meets the request, then corrected (up to 4 passes) from the measured ratio.
//   3. A pseudo-random permutation (Fisher-Yates on counter_rng) mixes the two halves.
// S is tracked exactly as a floating-point expansion (Shewchuk's Grow-Expansion, error-free
// TwoSum steps), the achieved condition with exact sums (Superaccumulator). Unlike every other
// generator, the elements depend on n (the exponent schedule and the permutation do).
// Range: the exponents must stay inside T (2^(b/2 + 4) n below the overflow threshold, e_end at
// least emin + p + 2): float up to about 1e60 (n <= 2^20), double any finite condition up to
// ~1e300; beyond that std::invalid_argument, as for condition < 1 or not finite.
// Achieved vs requested (measured, tests/core/generators_test.cpp): within a factor ~2 for
// requests from ~n up to the top of the range. Requests below ~n are floored near n / 2: the
// construction always leaves ~n/2 large terms against a final sum of at most ~2^(b/2).
// n < 4 gives step-1 values only (condition not controlled).
template <class T>
IllConditionedSum<T> generate_ill_conditioned(std::size_t n, double condition, std::uint64_t seed);

// n elements of the distribution. For ill_conditioned this is generate_ill_conditioned(...).values;
// for the others, element i == generate_element<T>(spec, seed, i) for every i. Throws
// std::invalid_argument for unusable parameters (non-finite, lo > hi, sigma < 0, condition < 1).
template <class T>
std::vector<T> generate(const DistributionSpec& spec, std::uint64_t seed, std::size_t n);

// --- orderings --------------------------------------------------------------------------------

enum class Ordering {
  as_generated,
  ascending,
  descending,
  magnitude_ascending,
  magnitude_descending
};

inline constexpr std::array<Ordering, 5> kAllOrderings{
    Ordering::as_generated, Ordering::ascending, Ordering::descending,
    Ordering::magnitude_ascending, Ordering::magnitude_descending};

constexpr std::string_view to_string(Ordering o) {
  switch (o) {
    case Ordering::as_generated: return "as_generated";
    case Ordering::ascending: return "ascending";
    case Ordering::descending: return "descending";
    case Ordering::magnitude_ascending: return "magnitude_ascending";
    case Ordering::magnitude_descending: return "magnitude_descending";
  }
  return "?";
}

constexpr std::string_view describe(Ordering o) {
  switch (o) {
    case Ordering::as_generated: return "the generator's order (element i at index i)";
    case Ordering::ascending: return "sorted by value, smallest (most negative) first";
    case Ordering::descending: return "sorted by value, largest first";
    case Ordering::magnitude_ascending: return "sorted by |x|, smallest first (Higham's advice)";
    case Ordering::magnitude_descending: return "sorted by |x|, largest first";
  }
  return "?";
}

// Parses a name of to_string(Ordering); throws std::invalid_argument listing the valid names.
Ordering parse_ordering(std::string_view name);

// The strict weak order of `o` (not as_generated), NaN the largest key (last in the ascending
// orders, first in the descending ones); host and device (gpu/bench.cu sorts bench inputs with
// it), so a sorted copy on the GPU is apply_ordering's on the CPU.
template <class T> struct OrderLess {
  Ordering order;
  SUMLAB_HD static bool less(T a, T b) {
    if (a != a) return false;  // NaN
    if (b != b) return true;
    return a < b;
  }
  SUMLAB_HD static T magnitude(T a) { return a < T(0) ? -a : a; }  // -0 and NaN as they are: same keys
  SUMLAB_HD bool operator()(T a, T b) const {
    switch (order) {
      case Ordering::ascending: return less(a, b);
      case Ordering::descending: return less(b, a);
      case Ordering::magnitude_ascending: return less(magnitude(a), magnitude(b));
      case Ordering::magnitude_descending: return less(magnitude(b), magnitude(a));
      case Ordering::as_generated: break;
    }
    return false;
  }
};

// Rearranges x as `o` says with std::stable_sort: equal keys (+0 and -0, x and -x by magnitude)
// keep their generated order, so the result is deterministic.
template <class T> void apply_ordering(std::vector<T>& x, Ordering o) {
  if (o != Ordering::as_generated) std::stable_sort(x.begin(), x.end(), OrderLess<T>{o});
}

}  // namespace sumlab
