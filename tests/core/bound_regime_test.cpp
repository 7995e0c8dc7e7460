// Every CPU algorithm and every modelled GPU kernel stays within its bound (core/error_bound.hpp)
// in the regime where second-order terms dominate: large n (to 2^24 floats, where n u = 1),
// constant and adversarial inputs (sorted up and down, alternating signs, Ogita-Rump-Oishi
// ill-conditioned), and the bfloat16 accumulator where n u >= 1. The bounds are also checked
// against hand-computed values, and shown not to be vacuous where they are tight.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/error_bound.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/generators.hpp"
#include "core/gpu_kernel.hpp"
#include "core/order_model/model_sum.hpp"
#include "reference/mpfr_sum.hpp"

namespace sumlab {
namespace {

enum class Input { constant, ascending, descending, alternating, ill_conditioned };

const char* name(Input i) {
  switch (i) {
    case Input::constant: return "constant 0.1";
    case Input::ascending: return "uniform sorted ascending";
    case Input::descending: return "uniform sorted descending";
    case Input::alternating: return "alternating signs";
    case Input::ill_conditioned: return "ill-conditioned 1e12";
  }
  return "?";
}

template <class T> std::vector<T> make(Input kind, std::size_t n) {
  DistributionSpec spec;
  if (kind == Input::constant) spec.kind = Distribution::constant;
  if (kind == Input::ill_conditioned) {
    spec.kind = Distribution::ill_conditioned;
    spec.condition = 1e12;
  }
  std::vector<T> x = generate<T>(spec, 5, n);
  if (kind == Input::ascending) std::sort(x.begin(), x.end());
  if (kind == Input::descending) std::sort(x.begin(), x.end(), [](T a, T b) { return a > b; });
  if (kind == Input::alternating)
    for (std::size_t i = 1; i < n; i += 2) x[i] = -x[i];
  return x;
}

// Runs everything on one input and checks each verdict. Returns the largest error / bound seen.
template <class T> double check_all(Input kind, std::size_t n) {
  const std::vector<T> x = make<T>(kind, n);
  const reference::ExactSum<T> exact(x);
  const auto m0 = exact.measure(static_cast<T>(exact.rounded()));
  const BoundInput base{n, m0.sum_abs, std::fabs(m0.exact), 0.0};
  double worst = 0;
  auto check = [&](const std::string& what, T value, double bound) {
    const auto m = exact.measure(value);
    const Verdict v = judge(m.judged(), bound);
    EXPECT_TRUE(v == Verdict::within || v == Verdict::no_bound)
        << what << " on " << name(kind) << " n=" << n << ": error " << m.abs_error << ", bound " << bound
        << ", verdict " << to_string(v);
    if (v == Verdict::within && bound > 0) worst = std::max(worst, m.abs_error / bound);
  };
  for (const auto& a : cpu_algorithms<T>()) {
    const SumResult<T> r = a.sum(x);
    BoundInput in = base;
    in.quantisation = r.extra_error_bound;
    check(std::string(a.info.name), r.value, a.bound(in));
  }
  for (const auto& k : gpu_kernels()) {
    if (!k.modelled || k.diagnostic_only || (k.float_input_only && !std::is_same_v<T, float>)) continue;
    // The default shape and an odd one: a grid that is no multiple of anything, 4-wide loads.
    LaunchShape odd = default_shape(k.kernel);
    if (k.shape_fields & field_grid) odd.grid = 37;
    if (k.shape_fields & field_vector) odd.vector = 4;
    for (const LaunchShape& s : {default_shape(k.kernel), odd}) {
      const auto r = model_sum<T>(k.kernel, s, x);
      if (!r.has_value) continue;
      BoundInput in = base;
      if (k.kernel == GpuKernel::fixed_point) in.quantisation = fixed_point_sum<T>(x).extra_error_bound;
      check(std::string(k.name) + " " + to_string(s), r.value, kernel_bound(k.kernel, format_of<T>(), s, in));
    }
  }
  return worst;
}

class BoundRegime : public ::testing::TestWithParam<Input> {};

TEST_P(BoundRegime, Float32To2Pow24) {
  for (std::size_t n : {std::size_t{1} << 16, std::size_t{1} << 20, (std::size_t{1} << 24) - 3})
    check_all<float>(GetParam(), n);
}
TEST_P(BoundRegime, Float64To2Pow22) {
  for (std::size_t n : {std::size_t{1} << 16, (std::size_t{1} << 22) + 5}) check_all<double>(GetParam(), n);
}
INSTANTIATE_TEST_SUITE_P(Inputs, BoundRegime,
                         ::testing::Values(Input::constant, Input::ascending, Input::descending,
                                           Input::alternating, Input::ill_conditioned));

TEST(BoundValues, HandComputed) {
  const FloatFormat f = format_of<float>();
  // The figure: constant 0.1f, n = 2^20, S = |s| = 104857.6 (in float: 0.1f * 2^20).
  const double S = 0.1f * 1048576.0;
  const double g = (1048575.0 * 0x1p-24) / (1 - 1048575.0 * 0x1p-24);
  EXPECT_NEAR(bound::sum2(f, {1u << 20, S, S, 0}), 0x1p-24 * S + g * g * S, 1e-9 * S);
  EXPECT_NEAR(bound::sum2(f, {1u << 20, S, S, 0}), 466.0, 0.5);
  // gamma_k: k u / (1 - k u), and none from k u = 1 on.
  EXPECT_DOUBLE_EQ(bound::gamma(f, 1), 0x1p-24 / (1 - 0x1p-24));
  EXPECT_TRUE(std::isinf(bound::gamma(f, 16777216)));
  EXPECT_TRUE(std::isinf(bound::tree(f, 16777216, {16777217, 1, 1, 0})));
  EXPECT_FALSE(std::isinf(bound::tree(f, 16777215, {16777216, 1, 1, 0})));
  // Sum2 needs n u < 1.
  EXPECT_TRUE(std::isinf(bound::sum2(f, {16777216, 1, 1, 0})));
  // Kahan: first order u|s| + 2u S, the rest O(n u^2); and a finite bound far beyond n u = 1.
  const double k2 = bound::kahan_chain(f, {2, 1, 1, 0});
  EXPECT_NEAR(k2, 3 * 0x1p-24, 1e-3 * 0x1p-24);
  EXPECT_TRUE(std::isfinite(bound::kahan_chain(f, {std::uint64_t{1} << 40, 1, 1, 0})));
  EXPECT_GT(bound::kahan_chain(f, {std::uint64_t{1} << 30, 1, 1, 0}), bound::kahan_chain(f, {1u << 20, 1, 1, 0}));
  // bfloat16 chains: a bound up to n = 256, none beyond.
  EXPECT_TRUE(std::isfinite(bound::bf16_chain(f, {256, 1, 1, 0})));
  EXPECT_TRUE(std::isinf(bound::bf16_chain(f, {257, 1, 1, 0})));
  // Correct rounding: half an ulp, or half the subnormal spacing at zero.
  EXPECT_DOUBLE_EQ(bound::correctly_rounded(f, {10, 10, 0, 0}), 0x1p-150 * (1 + 0x1p-40));
}

// The bfloat16 accumulator where n u approaches and passes 1: within the bound up to n = 256 on
// inputs that stall it, and "no bound" (never a false number) beyond.
TEST(BoundRegimeBf16, WithinUpTo256NoneBeyond) {
  const auto* a = find_cpu_algorithm<float>("serial_bf16");
  for (Input kind : {Input::constant, Input::ascending, Input::descending, Input::alternating})
    for (std::size_t n : {2, 3, 17, 100, 129, 200, 255, 256, 257, 1000, 10000}) {
      const std::vector<float> x = make<float>(kind, n);
      const reference::ExactSum<float> exact(x);
      const auto m = exact.measure(a->sum(x).value);
      const double b = a->bound({n, m.sum_abs, std::fabs(m.exact), 0});
      const Verdict v = judge(m.judged(), b);
      EXPECT_EQ(v, n <= 256 ? Verdict::within : Verdict::no_bound) << name(kind) << " n=" << n;
    }
}

// The bounds are not vacuous where their theorems are tight: constant input drives the serial
// chain and Neumaier's recursively summed corrections to a visible fraction of their bounds.
TEST(BoundTightness, ConstantInputReachesAVisibleFraction) {
  const std::size_t n = std::size_t{1} << 20;
  const std::vector<float> x = make<float>(Input::constant, n);
  const reference::ExactSum<float> exact(x);
  const auto m0 = exact.measure(0.0f);
  const BoundInput in{n, m0.sum_abs, std::fabs(m0.exact), 0};
  auto ratio = [&](const char* alg) {
    const auto* a = find_cpu_algorithm<float>(alg);
    return exact.measure(a->sum(x).value).abs_error / a->bound(in);
  };
  EXPECT_GT(ratio("serial"), 0.05);
  EXPECT_GT(ratio("neumaier"), 0.01);
  EXPECT_LE(ratio("serial"), 1.0);
  EXPECT_LE(ratio("neumaier"), 1.0);
}

}  // namespace
}  // namespace sumlab
