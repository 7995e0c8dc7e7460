// Every registered CPU algorithm stays within its documented error bound, measured against the
// MPFR reference, on at least 1000 random inputs of each generator (float and double).
#include "core/cpu_algorithms.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/float_traits.hpp"
#include "core/generators.hpp"
#include "reference/mpfr_sum.hpp"

namespace sumlab {
namespace {

template <class T> class CpuAlgorithms : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuAlgorithms, Types);

TYPED_TEST(CpuAlgorithms, NamesAreUniqueAndDescribed) {
  const auto all = cpu_algorithms<TypeParam>();
  ASSERT_GE(all.size(), 9u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_FALSE(all[i].info.summary.empty());
    EXPECT_FALSE(all[i].info.bound.formula.empty());
    EXPECT_FALSE(all[i].info.bound.source.empty());
    EXPECT_EQ(find_cpu_algorithm<TypeParam>(all[i].info.name), &all[i]);
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(all[i].info.name, all[j].info.name);
  }
  EXPECT_EQ(find_cpu_algorithm<TypeParam>("no_such_algorithm"), nullptr);
}

void expect_within_bound_on_random_inputs(Distribution kind, auto tag) {
  using T = decltype(tag);
  std::mt19937_64 rng(static_cast<std::uint64_t>(kind) * 1000 + sizeof(T));
  constexpr int inputs = 1000;
  for (int trial = 0; trial < inputs; ++trial) {
    DistributionSpec spec;
    spec.kind = kind;
    // Sizes from 0 to a few thousand, including the awkward ones.
    static const std::size_t fixed[] = {0, 1, 2, 7, 8, 31, 32, 33, 127, 128, 129, 1000};
    const std::size_t n = trial < 12 ? fixed[trial] : 1 + rng() % 3000;
    if (kind == Distribution::ill_conditioned) {
      spec.condition = std::pow(10.0, static_cast<double>(rng() % (sizeof(T) == 4 ? 30 : 50)));
      if (n < 4) continue;
    }
    const auto seed = static_cast<std::uint64_t>(trial) + 1;
    const std::vector<T> x = generate<T>(spec, seed, n);
    for (const auto& a : cpu_algorithms<T>()) {
      const SumResult<T> r = a.sum(x);
      const auto m = reference::measure<T>(x, r.value);
      ASSERT_FALSE(m.special) << a.info.name;
      const double bound = a.bound({n, m.sum_abs, std::fabs(m.exact), r.extra_error_bound});
      ASSERT_LE(m.abs_error, bound) << a.info.name << " dist " << to_string(kind) << " n " << n
                                    << " seed " << seed << " (bound " << a.info.bound.formula << ")";
    }
  }
}

TYPED_TEST(CpuAlgorithms, WithinBoundUniform) { expect_within_bound_on_random_inputs(Distribution::uniform, TypeParam{}); }
TYPED_TEST(CpuAlgorithms, WithinBoundNormal) { expect_within_bound_on_random_inputs(Distribution::normal, TypeParam{}); }
TYPED_TEST(CpuAlgorithms, WithinBoundConstant) { expect_within_bound_on_random_inputs(Distribution::constant, TypeParam{}); }
TYPED_TEST(CpuAlgorithms, WithinBoundCancellation) { expect_within_bound_on_random_inputs(Distribution::cancellation, TypeParam{}); }
TYPED_TEST(CpuAlgorithms, WithinBoundLognormal) { expect_within_bound_on_random_inputs(Distribution::lognormal, TypeParam{}); }
TYPED_TEST(CpuAlgorithms, WithinBoundIllConditioned) { expect_within_bound_on_random_inputs(Distribution::ill_conditioned, TypeParam{}); }

TYPED_TEST(CpuAlgorithms, ExactAndFixedPointAreOrderIndependent) {
  using T = TypeParam;
  DistributionSpec spec;
  spec.kind = Distribution::cancellation;
  std::vector<T> x = generate<T>(spec, 3, 5000);
  const T exact = find_cpu_algorithm<T>("exact")->sum(x).value;
  const T fixed = find_cpu_algorithm<T>("fixed_point")->sum(x).value;
  const T serial = find_cpu_algorithm<T>("serial")->sum(x).value;
  std::mt19937_64 rng(11);
  bool serial_changed = false;
  for (int i = 0; i < 20; ++i) {
    std::shuffle(x.begin(), x.end(), rng);
    EXPECT_EQ(to_bits(find_cpu_algorithm<T>("exact")->sum(x).value), to_bits(exact));
    EXPECT_EQ(to_bits(find_cpu_algorithm<T>("fixed_point")->sum(x).value), to_bits(fixed));
    serial_changed |= find_cpu_algorithm<T>("serial")->sum(x).value != serial;
  }
  EXPECT_TRUE(serial_changed) << "order dependence of the serial sum should show on this input";
}

}  // namespace
}  // namespace sumlab
