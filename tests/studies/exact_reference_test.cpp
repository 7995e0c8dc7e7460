// The studies' exact reference (studies/backend.hpp): the exact totals taken where the data lies,
// and the checks that catch a wrong one, against MPFR up to 2^24 elements and against the CPU's
// superaccumulator above. An input whose exact_totals() are off by the smallest subnormal must be
// refused on both paths; the right totals must pass and measure like MPFR's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/exact_sum.hpp"
#include "reference/mpfr_sum.hpp"
#include "studies/backend.hpp"

namespace {

using sumlab::ExactTotals;
using sumlab::Superaccumulator;

// Wide exponents with cancellation, subnormals, signed zeros; every special at the end when asked.
template <class T> std::vector<T> hostile(std::size_t n, bool specials) {
  std::vector<T> x(n);
  std::mt19937_64 rng(n);
  for (auto& v : x) {
    const int e = static_cast<int>(rng() % 120) - 60;
    v = std::ldexp(static_cast<T>(rng() % 1000003), e) * ((rng() & 1) ? T(-1) : T(1));
  }
  if (n > 8) {
    x[1] = std::numeric_limits<T>::denorm_min();
    x[2] = T(-0.0);
    x[3] = -x[0];
  }
  if (specials && n > 8) {
    x[5] = std::numeric_limits<T>::infinity();
    x[6] = std::numeric_limits<T>::quiet_NaN();
  }
  return x;
}

// An input that reports exact totals as a device would, optionally off by one smallest subnormal.
template <class T> class TotalsInput final : public sumlab::KernelInput<T> {
 public:
  TotalsInput(std::span<const T> x, bool wrong) : x_(x), wrong_(wrong) {}
  std::span<const T> host() override { return x_; }
  std::int64_t size() const override { return static_cast<std::int64_t>(x_.size()); }
  bool on_device() const override { return true; }
  std::optional<ExactTotals<T>> exact_totals() override {
    ExactTotals<T> t = sumlab::host_exact_totals<T>(x_);
    if (wrong_) t.sum.add_limb(0, 1);
    return t;
  }
  sumlab::KernelOutcome<T> run(sumlab::GpuKernel, const sumlab::LaunchShape&, const sumlab::KernelOptions&) override {
    throw std::logic_error("no kernels here");
  }

 private:
  std::span<const T> x_;
  bool wrong_;
};

template <class T> class ExactReference : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ExactReference, Floats);

// The threads' merged totals are one accumulator's, whatever the split (2^23 + 5 elements: two
// threads or more on any machine with two cores).
TYPED_TEST(ExactReference, HostTotalsOnEveryCoreAreOneAccumulators) {
  using T = TypeParam;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4097}, (std::size_t{1} << 23) + 5}) {
    const auto x = hostile<T>(n, n == 4097);
    Superaccumulator<T> sum, sum_abs;
    for (const T v : x) {
      sum.add(v);
      sum_abs.add(std::fabs(v));
    }
    const ExactTotals<T> t = sumlab::host_exact_totals<T>(x);
    EXPECT_EQ(t.sum.limbs(), sum.limbs()) << n;
    EXPECT_EQ(t.sum_abs.limbs(), sum_abs.limbs()) << n;
    EXPECT_TRUE(t.sum.specials() == sum.specials()) << n;
  }
}

// Both checks fire on totals one smallest subnormal off, and pass the right ones, which measure
// like MPFR's on the data.
TYPED_TEST(ExactReference, AWrongDeviceTotalIsRefusedOnBothPaths) {
  using T = TypeParam;
  for (const std::size_t n : {std::size_t{100003}, (std::size_t{1} << 24) + 3}) {
    const auto x = hostile<T>(n, false);
    TotalsInput<T> right(x, false), wrong(x, true);
    EXPECT_THROW(sumlab::exact_reference<T>(wrong, true), std::runtime_error) << n;
    EXPECT_NO_THROW(sumlab::exact_reference<T>(wrong, false)) << n;  // unchecked: taken as given
    const auto r = sumlab::exact_reference<T>(right, true);
    const sumlab::reference::ExactSum<T> mpfr{std::span<const T>(x)};
    const auto a = r->measure(T(1)), b = mpfr.measure(T(1));
    EXPECT_EQ(a.exact, b.exact) << n;
    EXPECT_EQ(a.sum_abs, b.sum_abs) << n;
    EXPECT_EQ(a.abs_error, b.abs_error) << n;
  }
}

}  // namespace
