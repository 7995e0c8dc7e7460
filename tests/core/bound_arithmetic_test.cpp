// The bounds' own arithmetic (core/error_bound.hpp): each printed bound is at least the theorem's
// real-valued expression at its double arguments times (1 + 2^-40), the factor kept for S and |s|
// being rounded to double. The expressions are re-evaluated here with MPFR at 512 bits, from the
// header's formulas, in the regimes where double evaluation loses most: the conditions' edges
// (k u -> 1, Kahan's n -> 1/(6u^2)), deep Kahan trees and subnormal S. Evaluated to nearest, a
// bound came out below the expression at a few ulps in about half of these cases.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error_bound.hpp"

namespace sumlab {
namespace {

constexpr mpfr_prec_t kBits = 512;

// A copyable MPFR real at kBits, rounded to nearest: its own error is below 2^-400 relative for
// every expression here (at most 2^24 operations, each 2^-512, and no cancellation past 2^60).
class Real {
 public:
  Real(double x = 0) {
    mpfr_init2(v_, kBits);
    mpfr_set_d(v_, x, MPFR_RNDN);
  }
  Real(const Real& o) {
    mpfr_init2(v_, kBits);
    mpfr_set(v_, o.v_, MPFR_RNDN);
  }
  Real& operator=(const Real& o) {
    mpfr_set(v_, o.v_, MPFR_RNDN);
    return *this;
  }
  ~Real() { mpfr_clear(v_); }
  static Real of(std::uint64_t k) {
    Real r;
    mpfr_set_uj(r.v_, k, MPFR_RNDN);
    return r;
  }
  friend Real operator+(const Real& a, const Real& b) { return op(mpfr_add, a, b); }
  friend Real operator-(const Real& a, const Real& b) { return op(mpfr_sub, a, b); }
  friend Real operator*(const Real& a, const Real& b) { return op(mpfr_mul, a, b); }
  friend Real operator/(const Real& a, const Real& b) { return op(mpfr_div, a, b); }
  friend Real max(const Real& a, const Real& b) { return op(mpfr_max, a, b); }
  // d >= this value times (1 - 2^-400), the margin of this evaluation's own error.
  bool below_or_at(double d) const { return !(*this * (1 - 0x1p-400) > Real(d)); }
  friend bool operator>(const Real& a, const Real& b) { return mpfr_greater_p(a.v_, b.v_); }
  double to_double() const { return mpfr_get_d(v_, MPFR_RNDN); }

 private:
  template <class F> static Real op(F f, const Real& a, const Real& b) {
    Real r;
    f(r.v_, a.v_, b.v_, MPFR_RNDN);
    return r;
  }
  mpfr_t v_;
};

const Real kSlack = Real(1) + Real(0x1p-40);

Real u_of(FloatFormat f) { return Real(std::ldexp(1.0, -f.precision)); }
Real gamma(FloatFormat f, const Real& k) { return k * u_of(f) / (Real(1) - k * u_of(f)); }
// The underflow term 2^(min_subnormal_exp - 1); 0 for float64, as the header proves it is.
Real half_sub(FloatFormat f) { return Real(f.half_min_subnormal()); }

// The printed bound against the expression: sound (at or above expression x slack) and not loose
// (within 2^-20 relative, or a few subnormal spacings where the bound itself underflows: an outward
// step costs at most one ulp per operation, which a denominator near 0 amplifies).
void expect_sound_and_tight(double printed, const Real& expression, const std::string& what) {
  SCOPED_TRACE(what);
  const Real target = expression * kSlack;
  ASSERT_TRUE(std::isfinite(printed)) << target.to_double();
  EXPECT_TRUE(target.below_or_at(printed)) << printed << " < " << target.to_double();
  const Real loose = target * (Real(1) + Real(0x1p-20)) + Real(0x1p-1060);
  EXPECT_TRUE(Real(printed).below_or_at(loose.to_double())) << printed << " >> " << target.to_double();
}

struct Case {
  std::uint64_t n;
  double S, abs_s;
};
// Awkward arguments: round and not, |s| far below S, S subnormal.
const std::vector<Case> kInputs = {{2, 1, 1}, {1000, 3.7e5, 1e-3}, {3, 0x1p-1070, 0x1p-1072}, {77777, 0.1, 0.1}};

const FloatFormat kF32 = format_of<float>(), kF64 = format_of<double>();

TEST(BoundArithmetic, GammaAtTheEdgeOfItsCondition) {
  for (FloatFormat f : {kF32, kF64, bfloat16_format})
    for (double k : {1.0, 3.0, 1048577.0, 16777215.0, 9007199254740991.0}) {
      if (!(k * std::ldexp(1.0, -f.precision) < 1)) {
        EXPECT_TRUE(std::isinf(bound::gamma(f, k))) << k;
        continue;
      }
      const Real g = gamma(f, Real(k));
      EXPECT_TRUE(g.below_or_at(bound::gamma(f, k))) << f.precision << " k=" << k;
    }
}

TEST(BoundArithmetic, TreesAndAtomicTrees) {
  for (FloatFormat f : {kF32, kF64})
    for (std::uint64_t d : {std::uint64_t{1}, std::uint64_t{17}, std::uint64_t{1} << 20, (std::uint64_t{1} << 24) - 1})
      for (const Case& c : kInputs) {
        const BoundInput in{c.n, c.S, c.abs_s, 0};
        const Real g = gamma(f, Real::of(d)), S(c.S);
        const std::string at = std::to_string(f.precision) + " d=" + std::to_string(d) + " S=" + std::to_string(c.S);
        expect_sound_and_tight(bound::tree(f, d, in), g * S, "tree " + at);
        const std::uint64_t adds = 2640;
        const Real atomic = f.precision == 24 ? g * S + (Real(1) + g) * Real::of(adds) * Real(0x1p-125) : g * S;
        expect_sound_and_tight(bound::atomic_tree(f, d, adds, in), atomic, "atomic " + at);
      }
}

TEST(BoundArithmetic, WideTrees) {
  for (const auto& [out, acc] : {std::pair{kF32, kF64}, std::pair{kF64, wider_format<double>()}})
    for (std::uint64_t d : {std::uint64_t{1}, std::uint64_t{40}, std::uint64_t{1} << 33})
      for (const Case& c : kInputs) {
        const Real e = u_of(out) * Real(c.abs_s) + (Real(1) + u_of(out)) * gamma(acc, Real::of(d)) * Real(c.S) + half_sub(out);
        expect_sound_and_tight(bound::wide_tree(out, acc, d, {c.n, c.S, c.abs_s, 0}), e,
                               "wide " + std::to_string(out.precision) + " d=" + std::to_string(d));
      }
}

TEST(BoundArithmetic, Bfloat16ChainsUpTo256) {
  const FloatFormat b = bfloat16_format;
  for (FloatFormat in_format : {kF32, kF64})
    for (std::uint64_t n : {2, 3, 100, 255, 256}) {
      const Real ub = u_of(b);
      const Real r = in_format.precision > 24 ? (Real(1) + u_of(kF32)) * (Real(1) + ub) - Real(1) : ub;
      const Real a = in_format.precision > 24 ? half_sub(b) + half_sub(kF32) * (Real(1) + ub) : half_sub(b);
      for (const Case& c : kInputs) {
        const Real S(c.S), N = Real::of(n);
        const Real e = r * S + N * a + gamma(b, Real::of(n - 1)) * ((Real(1) + r) * S + N * a);
        expect_sound_and_tight(bound::bf16_chain(in_format, {n, c.S, c.abs_s, 0}), e, "bf16 n=" + std::to_string(n));
      }
    }
}

// Kahan's chain, the header's formula, up to n - 1 where its denominator is 2^-20 of 1.
Real kahan_chain(FloatFormat f, std::uint64_t n, const Real& S, const Real& abs_s) {
  const Real u = u_of(f), N = Real::of(n - 1), one(1);
  const Real lambda = u * (Real(2) + Real(7) * u + Real(6) * u * u);
  const Real kappa = Real(3) * u * (one + Real(2) * u) * (one + u);
  const Real C = kappa * (one + lambda) * S / (one - kappa - kappa * lambda * N);
  return (u * abs_s + lambda * S + (N * lambda + u) * C) / (one - u);
}

TEST(BoundArithmetic, KahanChainsToTheEdgeOfTheCondition) {
  for (FloatFormat f : {kF32, kF64}) {
    // kappa (1 + lambda N) = 1 at N about 1/(6 u^2): 4.7e13 for float, 1.35e31 (past 2^64) for double.
    const double u = std::ldexp(1.0, -f.precision);
    const double edge = std::fmin(1 / (6 * u * u), 0x1p63);
    for (double fraction : {1e-9, 0.5, 0.999, 1 - 0x1p-20}) {
      const auto n = static_cast<std::uint64_t>(edge * fraction) + 2;
      for (const Case& c : kInputs) {
        const Real e = kahan_chain(f, n, Real(c.S), Real(c.abs_s));
        expect_sound_and_tight(bound::kahan_chain(f, {n, c.S, c.abs_s, 0}), e, "kahan n=" + std::to_string(n));
      }
    }
  }
}

// gpu_kahan's tree: the recurrence of core/error_bound.cpp's proof, from the chain's constants.
Real kahan_tree(FloatFormat f, std::uint64_t chain, std::uint64_t levels, const Real& S, const Real& abs_s) {
  const Real u = u_of(f), one(1), N = Real::of(chain - 1);
  const Real lambda = u * (Real(2) + Real(7) * u + Real(6) * u * u);
  const Real kappa = Real(3) * u * (one + Real(2) * u) * (one + u);
  Real beta = kappa * (one + lambda) / (one - kappa - kappa * lambda * N);
  Real alpha = lambda * (one + N * beta), rho = alpha + beta;
  for (std::uint64_t l = 0; l < levels; ++l) {
    alpha = alpha + u * (Real(2) + u) * beta + u * u * (one + u) * (one + rho);
    beta = (one + u) * (one + u) * (beta + u * (one + rho));
    rho = (one + u) * (one + rho) - one;
  }
  return u * abs_s + (one + u) * alpha * S + half_sub(f);
}

TEST(BoundArithmetic, DeepKahanTrees) {
  for (FloatFormat f : {kF32, kF64})
    for (std::uint64_t chain : {1, 8, 1 << 20})
      for (std::uint64_t levels : {0, 1, 31, 4096, 1 << 19}) {
        const Case c = kInputs[1];
        const Real e = kahan_tree(f, chain, levels, Real(c.S), Real(c.abs_s));
        expect_sound_and_tight(bound::kahan_tree(f, chain, levels, {c.n, c.S, c.abs_s, 0}), e,
                               "kahan tree " + std::to_string(f.precision) + " chain=" + std::to_string(chain) +
                                   " levels=" + std::to_string(levels));
      }
}

TEST(BoundArithmetic, Sum2CorrectRoundingAndFixedPoint) {
  for (FloatFormat f : {kF32, kF64}) {
    const double limit = std::ldexp(1.0, f.precision);  // n u < 1
    for (std::uint64_t n : {std::uint64_t{2}, std::uint64_t{1000}, static_cast<std::uint64_t>(std::fmin(limit, 0x1p62)) - 1})
      for (const Case& c : kInputs) {
        const Real g = gamma(f, Real::of(n - 1)), S(c.S), abs_s(c.abs_s);
        expect_sound_and_tight(bound::sum2(f, {n, c.S, c.abs_s, 0}), u_of(f) * abs_s + g * g * S,
                               "sum2 n=" + std::to_string(n));
        expect_sound_and_tight(bound::correctly_rounded(f, {n, c.S, c.abs_s, 0}), max(u_of(f) * abs_s, half_sub(f)),
                               "correctly rounded");
        const double q = 12345 * 0x1p-31;
        expect_sound_and_tight(bound::fixed_point(f, {n, c.S, c.abs_s, q}),
                               Real(q) * (Real(1) + u_of(f)) + max(u_of(f) * abs_s, half_sub(f)), "fixed point");
      }
  }
}

}  // namespace
}  // namespace sumlab
