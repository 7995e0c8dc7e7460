// core/generators and core/counter_rng: purity (element i depends on (seed, i) only), seeds,
// sample statistics within 6 standard errors, exact constants, cancellation, name parsing,
// orderings, golden bit checksums (the GPU must reproduce them), and the Ogita-Rump-Oishi
// generator's achieved condition against the request.
#include "core/generators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/counter_rng.hpp"
#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "reference/mpfr_sum.hpp"

namespace {

using namespace sumlab;

DistributionSpec spec_of(Distribution d) {
  DistributionSpec s;
  s.kind = d;
  if (d == Distribution::uniform) s.lo = -2, s.hi = 3;
  if (d == Distribution::normal) s.mu = 1, s.sigma = 2;
  if (d == Distribution::lognormal) s.mu = 0.5, s.sigma = 0.75;
  return s;
}

template <class T> void check_pure(Distribution d) {
  const auto spec = spec_of(d);
  const auto small = generate<T>(spec, 7, 33);
  const auto large = generate<T>(spec, 7, 1000);
  for (std::size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(to_bits(small[i]), to_bits(large[i])) << to_string(d) << " i=" << i;
    EXPECT_EQ(to_bits(large[i]), to_bits(generate_element<T>(spec, 7, i))) << to_string(d);
  }
  for (std::size_t i = 0; i < large.size(); i += 37) {
    EXPECT_EQ(to_bits(large[i]), to_bits(generate_element<T>(spec, 7, i))) << to_string(d);
  }
  EXPECT_TRUE(generate<T>(spec, 7, 0).empty());
}

TEST(Generators, ElementIDoesNotDependOnN) {
  for (Distribution d : kAllDistributions) {
    if (d == Distribution::ill_conditioned) continue;
    check_pure<float>(d);
    check_pure<double>(d);
  }
  EXPECT_TRUE(std::isnan(generate_element<float>(spec_of(Distribution::ill_conditioned), 1, 0)));
}

TEST(Generators, SeedsAndStreamsDiffer) {
  for (Distribution d : {Distribution::uniform, Distribution::normal, Distribution::cancellation,
                         Distribution::lognormal}) {
    const auto a = generate<double>(spec_of(d), 1, 1000), b = generate<double>(spec_of(d), 2, 1000);
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    EXPECT_EQ(same, 0u) << to_string(d);
  }
  EXPECT_NE(random_bits(1, 0, 0), random_bits(1, 0, 1));
  EXPECT_NE(random_bits(1, 0, 0), random_bits(1, 1, 0));
  EXPECT_NE(random_bits(0, 0, 0), random_bits(1, 0, 0));
  // Neighbouring indices: each output bit flips about half the time (avalanche).
  std::uint64_t flips[64] = {};
  for (std::uint64_t i = 0; i < 20000; ++i) {
    const std::uint64_t x = random_bits(3, i, 0) ^ random_bits(3, i + 1, 0);
    for (int b = 0; b < 64; ++b) flips[b] += (x >> b) & 1;
  }
  for (int b = 0; b < 64; ++b) {
    EXPECT_NEAR(double(flips[b]) / 20000, 0.5, 6 * 0.5 / std::sqrt(20000.0));
  }
}

TEST(CounterRng, UniformRangesAndGrids) {
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const double u = uniform_double(5, i, 0);
    const float f = uniform_float(5, i, 0);
    ASSERT_TRUE(u >= 0.0 && u < 1.0);
    ASSERT_TRUE(f >= 0.0f && f < 1.0f);
    ASSERT_EQ(std::ldexp(u, 53), std::floor(std::ldexp(u, 53)));  // on the 2^-53 grid
    ASSERT_EQ(std::ldexp(f, 24), std::floor(std::ldexp(f, 24)));
  }
}

struct Moments {
  double mean = 0, var = 0;
};
template <class T> Moments sample_moments(const std::vector<T>& x) {
  Moments m;
  for (T v : x) m.mean += double(v);
  m.mean /= double(x.size());
  for (T v : x) m.var += (double(v) - m.mean) * (double(v) - m.mean);
  m.var /= double(x.size());
  return m;
}

TEST(Generators, UniformStatistics) {
  const std::size_t n = std::size_t(1) << 20;
  const auto spec = spec_of(Distribution::uniform);  // [-2, 3)
  for (int seed = 1; seed <= 2; ++seed) {
    const auto x = generate<double>(spec, std::uint64_t(seed), n);
    const auto m = sample_moments(x);
    const double w = spec.hi - spec.lo, sigma2 = w * w / 12;
    EXPECT_NEAR(m.mean, (spec.lo + spec.hi) / 2, 6 * std::sqrt(sigma2 / double(n)));
    // Var of the sample variance: (mu4 - sigma^4) / n with mu4 = w^4 / 80.
    EXPECT_NEAR(m.var, sigma2, 6 * std::sqrt((w * w * w * w / 80 - sigma2 * sigma2) / double(n)));
    EXPECT_GE(*std::min_element(x.begin(), x.end()), spec.lo);
    EXPECT_LT(*std::max_element(x.begin(), x.end()), spec.hi);
    // A histogram of 16 bins: every bin within 6 standard errors of n / 16.
    std::vector<double> bins(16);
    for (double v : x) bins[std::size_t((v - spec.lo) / w * 16)] += 1;
    const double p = 1.0 / 16;
    for (double b : bins) EXPECT_NEAR(b / double(n), p, 6 * std::sqrt(p * (1 - p) / double(n)));
  }
}

TEST(Generators, NormalStatistics) {
  const std::size_t n = std::size_t(1) << 20;
  const auto spec = spec_of(Distribution::normal);  // mu 1, sigma 2
  const auto x = generate<double>(spec, 11, n);
  const auto m = sample_moments(x);
  EXPECT_NEAR(m.mean, spec.mu, 6 * spec.sigma / std::sqrt(double(n)));
  EXPECT_NEAR(m.var, spec.sigma * spec.sigma,
              6 * std::sqrt(2.0 / double(n)) * spec.sigma * spec.sigma);
  // Tail fractions: P(|z| < 1) = 0.682689, P(|z| < 2) = 0.954500.
  for (auto [k, p] : {std::pair{1.0, 0.682689492137}, std::pair{2.0, 0.954499736104}}) {
    double inside = 0;
    for (double v : x) inside += std::fabs(v - spec.mu) < k * spec.sigma;
    EXPECT_NEAR(inside / double(n), p, 6 * std::sqrt(p * (1 - p) / double(n)));
  }
  // float: the same draws rounded once.
  const auto f = generate<float>(spec, 11, 1000);
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], static_cast<float>(x[i]));
}

TEST(Generators, LognormalStatistics) {
  const std::size_t n = std::size_t(1) << 19;
  const auto spec = spec_of(Distribution::lognormal);
  const auto x = generate<double>(spec, 3, n);
  std::vector<double> logs(n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_GT(x[i], 0.0);
    logs[i] = std::log(x[i]);
  }
  const auto m = sample_moments(logs);
  EXPECT_NEAR(m.mean, spec.mu, 6 * spec.sigma / std::sqrt(double(n)));
  EXPECT_NEAR(m.var, spec.sigma * spec.sigma,
              6 * std::sqrt(2.0 / double(n)) * spec.sigma * spec.sigma);
}

TEST(Generators, ConstantIsExactlyTheRoundedValue) {
  DistributionSpec spec;
  spec.kind = Distribution::constant;
  spec.value = 0.1;
  for (float v : generate<float>(spec, 1, 100)) EXPECT_EQ(to_bits(v), to_bits(0.1f));
  for (double v : generate<double>(spec, 1, 100)) EXPECT_EQ(to_bits(v), to_bits(0.1));
}

TEST(Generators, CancellationHasBothSignsAndALargeCondition) {
  const std::size_t n = 100000;
  const auto x = generate<double>(spec_of(Distribution::cancellation), 5, n);
  std::size_t negatives = 0;
  for (double v : x) {
    negatives += v < 0;
    ASSERT_GE(std::fabs(v), std::ldexp(1.0, -20) * (1 - 1e-15));
    ASSERT_LE(std::fabs(v), std::ldexp(1.0, 20));
  }
  EXPECT_NEAR(double(negatives) / double(n), 0.5, 6 * 0.5 / std::sqrt(double(n)));
  const auto m = reference::measure<double>(x, 0.0);
  std::printf("cancellation n=%zu: condition %.3g (0.27 sqrt(n) = %.3g)\n", n, m.condition,
              0.27 * std::sqrt(double(n)));
  EXPECT_GT(m.condition, 10.0);
  const auto u = reference::measure<double>(generate<double>(DistributionSpec{}, 5, n), 0.0);
  EXPECT_EQ(u.condition, 1.0);  // uniform [0, 1): no cancellation at all
}

// random_bits: finite always, and every exponent field but all-ones present (the exact sum's wide
// path is timed and tested on it); both signs; the element is T's bits, not a rounded double.
template <class T> void check_random_bits() {
  using Traits = FloatTraits<T>;
  using Bits = typename Traits::Bits;
  constexpr int f = Traits::precision - 1;
  constexpr Bits exponent_ones = (Bits(1) << Traits::exponent_bits) - 1;
  std::vector<int> seen(std::size_t(exponent_ones) + 1, 0);
  int negative = 0;
  const auto x = generate<T>(spec_of(Distribution::random_bits), 5, 1 << 16);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(std::isfinite(x[i])) << i;
    const Bits b = to_bits(x[i]);
    ++seen[std::size_t((b >> f) & exponent_ones)];
    negative += std::signbit(x[i]) ? 1 : 0;
    ASSERT_EQ(b, to_bits(generate_element<T>(spec_of(Distribution::random_bits), 5, i)));
  }
  EXPECT_EQ(seen[exponent_ones], 0);
  int present = 0;
  for (std::size_t e = 0; e < exponent_ones; ++e) present += seen[e] > 0 ? 1 : 0;
  EXPECT_EQ(present, int(exponent_ones)) << "exponent fields 0 .. all-ones - 1 present";
  EXPECT_GT(negative, (1 << 15) - 1000);
  EXPECT_LT(negative, (1 << 15) + 1000);
}

TEST(Generators, RandomBitsCoverEveryExponent) {
  check_random_bits<float>();
  check_random_bits<double>();
}

TEST(Generators, ParseAndPrintNames) {
  for (Distribution d : kAllDistributions) {
    EXPECT_EQ(parse_distribution(to_string(d)), d);
    EXPECT_FALSE(describe(d).empty());
  }
  for (Ordering o : kAllOrderings) {
    EXPECT_EQ(parse_ordering(to_string(o)), o);
    EXPECT_FALSE(describe(o).empty());
  }
  try {
    parse_distribution("gaussian");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'gaussian'"), std::string::npos);
    for (Distribution d : kAllDistributions) {
      EXPECT_NE(what.find(std::string(to_string(d))), std::string::npos) << what;
    }
  }
  try {
    parse_ordering("random");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (Ordering o : kAllOrderings) {
      EXPECT_NE(what.find(std::string(to_string(o))), std::string::npos) << what;
    }
  }
}

// NAME[:SIGMA], the bench's and verify's inputs: the sigma of normal and lognormal, nothing else.
TEST(Generators, ParseNameAndSigma) {
  const DistributionSpec wide = parse_distribution_spec("lognormal:12");
  EXPECT_EQ(wide.kind, Distribution::lognormal);
  EXPECT_EQ(wide.sigma, 12);
  EXPECT_EQ(wide.mu, 0);
  EXPECT_EQ(parse_distribution_spec("normal:0.25").sigma, 0.25);
  const DistributionSpec plain = parse_distribution_spec("lognormal");
  EXPECT_EQ(plain.kind, Distribution::lognormal);
  EXPECT_EQ(plain.sigma, DistributionSpec{}.sigma);
  EXPECT_EQ(parse_distribution_spec("random_bits").kind, Distribution::random_bits);
  for (const char* bad : {"uniform:3", "lognormal:", "lognormal:12x", "lognormal:-1", "lognormal:nan", "normal:inf",
                          "gaussian:1", ":1"}) {
    EXPECT_THROW(parse_distribution_spec(bad), std::invalid_argument) << bad;
  }
  // The sigma reaches the generator: element i is the same as with the spec built by hand.
  DistributionSpec by_hand;
  by_hand.kind = Distribution::lognormal;
  by_hand.sigma = 12;
  EXPECT_EQ(to_bits(generate_element<float>(wide, 1, 12345)), to_bits(generate_element<float>(by_hand, 1, 12345)));
}

TEST(Generators, InvalidParametersThrow) {
  DistributionSpec s;
  s.lo = 2, s.hi = 1;
  EXPECT_THROW(generate<float>(s, 1, 10), std::invalid_argument);
  s = spec_of(Distribution::normal);
  s.sigma = -1;
  EXPECT_THROW(generate<float>(s, 1, 10), std::invalid_argument);
  s = spec_of(Distribution::ill_conditioned);
  s.condition = 0.5;
  EXPECT_THROW(generate<double>(s, 1, 10), std::invalid_argument);
  EXPECT_THROW(generate_ill_conditioned<float>(1000, 1e80, 1), std::invalid_argument);
}

// Golden checksums of the generated bits: the CPU/GPU contract. A change here changes every
// committed run; update only on purpose (and regenerate the data).
template <class T> std::uint64_t checksum(Distribution d) {
  std::uint64_t h = 0;
  for (T v : generate<T>(spec_of(d), 42, 4096)) h = mix64(h ^ std::uint64_t(to_bits(v)));
  return h;
}

TEST(Generators, GoldenBits) {
  struct Golden {
    Distribution d;
    std::uint64_t f, d64;
  };
  const Golden golden[] = {
      {Distribution::uniform, 0x4d57366fa35c0450ull, 0x35bf46f65129a3a5ull},
      {Distribution::normal, 0xeefad2f52a045332ull, 0x4a381d1d63223cbbull},
      {Distribution::constant, 0x9fa76fce3573451aull, 0x11ea0930849f7689ull},
      {Distribution::cancellation, 0x1bc68924c0378eceull, 0xb2a427a82fa7cf9dull},
      {Distribution::lognormal, 0x88251fc298690a6aull, 0xf951e151336e20f5ull},
      {Distribution::ill_conditioned, 0x173bc134d0692d64ull, 0x5e58ec4d25eed765ull},
      {Distribution::random_bits, 0x1695e49ad8c59db2ull, 0xab8cc6f02ef2ff1dull},
  };
  for (const auto& g : golden) {
    EXPECT_EQ(checksum<float>(g.d), g.f) << to_string(g.d);
    EXPECT_EQ(checksum<double>(g.d), g.d64) << to_string(g.d);
  }
}

// --- orderings ----------------------------------------------------------------------------------

TEST(Orderings, SortAsClaimedAndStably) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{3.0f, -0.0f, -5.0f, 0.0f, nan, 1.0f, -1.0f, 5.0f};
  auto a = x;
  apply_ordering(a, Ordering::as_generated);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(to_bits(a[i]), to_bits(x[i]));

  apply_ordering(a, Ordering::ascending);
  const std::vector<float> asc{-5.0f, -1.0f, -0.0f, 0.0f, 1.0f, 3.0f, 5.0f, nan};
  for (std::size_t i = 0; i < asc.size(); ++i) EXPECT_EQ(to_bits(a[i]), to_bits(asc[i])) << i;

  a = x;
  apply_ordering(a, Ordering::descending);
  const std::vector<float> desc{nan, 5.0f, 3.0f, 1.0f, -0.0f, 0.0f, -1.0f, -5.0f};
  for (std::size_t i = 0; i < desc.size(); ++i) EXPECT_EQ(to_bits(a[i]), to_bits(desc[i])) << i;

  a = x;
  apply_ordering(a, Ordering::magnitude_ascending);  // ties keep the generated order
  const std::vector<float> mag{-0.0f, 0.0f, 1.0f, -1.0f, 3.0f, -5.0f, 5.0f, nan};
  for (std::size_t i = 0; i < mag.size(); ++i) EXPECT_EQ(to_bits(a[i]), to_bits(mag[i])) << i;

  a = x;
  apply_ordering(a, Ordering::magnitude_descending);
  const std::vector<float> magd{nan, -5.0f, 5.0f, 3.0f, 1.0f, -1.0f, -0.0f, 0.0f};
  for (std::size_t i = 0; i < magd.size(); ++i) EXPECT_EQ(to_bits(a[i]), to_bits(magd[i])) << i;
}

TEST(Orderings, LargeArraysAreSortedPermutations) {
  auto x = generate<double>(spec_of(Distribution::cancellation), 1, 10000);
  for (Ordering o : kAllOrderings) {
    auto y = x;
    apply_ordering(y, o);
    auto s1 = x, s2 = y;
    std::sort(s1.begin(), s1.end());
    std::sort(s2.begin(), s2.end());
    EXPECT_EQ(s1, s2) << to_string(o);
    for (std::size_t i = 1; i < y.size(); ++i) {
      switch (o) {
        case Ordering::ascending: ASSERT_LE(y[i - 1], y[i]); break;
        case Ordering::descending: ASSERT_GE(y[i - 1], y[i]); break;
        case Ordering::magnitude_ascending: ASSERT_LE(std::fabs(y[i - 1]), std::fabs(y[i])); break;
        case Ordering::magnitude_descending: ASSERT_GE(std::fabs(y[i - 1]), std::fabs(y[i])); break;
        case Ordering::as_generated: ASSERT_EQ(y[i], x[i]); break;
      }
    }
  }
}

// --- Ogita-Rump-Oishi ----------------------------------------------------------------------------

template <class T> void check_condition_table(std::size_t n, int max_exp10) {
  for (int k = 2; k <= max_exp10; k += 2) {
    const double requested = std::pow(10.0, k);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const auto g = generate_ill_conditioned<T>(n, requested, seed);
      ASSERT_EQ(g.values.size(), n);
      for (T v : g.values) ASSERT_TRUE(std::isfinite(v));
      const double off = std::log10(g.achieved / requested);
      if (seed == 1) {
        std::printf("ORO %s n=%zu requested 1e%-3d achieved %.3e (x%.2f)\n",
                    std::string(FloatTraits<T>::dtype).c_str(), n, k, g.achieved,
                    g.achieved / requested);
      }
      EXPECT_LE(std::fabs(off), 2.0) << "requested 1e" << k << " seed " << seed;
      // The achieved condition agrees with MPFR's exact sums.
      const auto m = reference::measure<T>(g.values, T(0));
      EXPECT_NEAR(m.condition / g.achieved, 1.0, 1e-5);
    }
  }
}

TEST(IllConditioned, AchievedConditionNearRequestFloat) { check_condition_table<float>(2000, 40); }
TEST(IllConditioned, AchievedConditionNearRequestDouble) {
  check_condition_table<double>(2000, 60);
}

TEST(IllConditioned, PureFunctionOfSeedNAndCondition) {
  const auto a = generate_ill_conditioned<double>(1000, 1e20, 4);
  const auto b = generate_ill_conditioned<double>(1000, 1e20, 4);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.achieved, b.achieved);
  EXPECT_NE(a.values, generate_ill_conditioned<double>(1000, 1e20, 5).values);
  DistributionSpec s;
  s.kind = Distribution::ill_conditioned;
  s.condition = 1e20;
  EXPECT_EQ(generate<double>(s, 4, 1000), a.values);
  // Small n still works (no condition control below 4 elements).
  for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 5u, 7u}) {
    EXPECT_EQ(generate_ill_conditioned<float>(n, 1e10, 1).values.size(), n);
  }
}

}  // namespace
