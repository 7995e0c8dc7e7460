// core/portable_math: accuracy of portable_log / portable_exp / portable_expf_nonpositive against
// MPFR's correctly rounded values (max error in ulps, measured), against std::log / std::exp (ulp
// distance; portable_expf_nonpositive over every float <= 0, or a stride of them), the specials,
// and a golden checksum of the exact bits (so that a build which contracts a*b+c into an FMA, or
// any edit that changes a result bit, is caught: the GPU relies on these bits).
#include "core/portable_math.hpp"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

#include "core/counter_rng.hpp"
#include "core/float_traits.hpp"
#include "core/metrics.hpp"

namespace {

using sumlab::portable_exp;
using sumlab::portable_expf_nonpositive;
using sumlab::portable_log;

// |y - f(x)| in ulps of the correctly rounded f(x), with f(x) from MPFR at 256 bits.
class UlpError {
 public:
  UlpError() { mpfr_inits2(256, exact_, diff_, static_cast<mpfr_ptr>(nullptr)); }
  ~UlpError() { mpfr_clears(exact_, diff_, static_cast<mpfr_ptr>(nullptr)); }
  double operator()(double x, double y, bool is_log) {
    mpfr_set_d(exact_, x, MPFR_RNDN);
    if (is_log) mpfr_log(exact_, exact_, MPFR_RNDN);
    else mpfr_exp(exact_, exact_, MPFR_RNDN);
    const double cr = mpfr_get_d(exact_, MPFR_RNDN);
    if (std::isinf(cr) || std::isinf(y)) {
      return cr == y ? 0.0 : std::numeric_limits<double>::infinity();
    }
    mpfr_set_d(diff_, y, MPFR_RNDN);
    mpfr_sub(diff_, diff_, exact_, MPFR_RNDN);
    mpfr_div_2si(diff_, diff_, std::ilogb(sumlab::ulp(cr)), MPFR_RNDN);
    return std::fabs(mpfr_get_d(diff_, MPFR_RNDN));
  }

 private:
  mpfr_t exact_, diff_;
};

TEST(PortableLog, WithinOneUlpOfCorrectlyRounded) {
  UlpError err;
  double worst = 0, worst_x = 0;
  std::uint64_t worst_std = 0;
  auto check = [&](double x) {
    const double y = portable_log(x);
    const double e = err(x, y, true);
    if (e > worst) worst = e, worst_x = x;
    worst_std = std::max(worst_std, sumlab::ulp_distance(y, std::log(x)));
  };
  for (std::uint64_t i = 0; i < 50000; ++i) {
    // Uniform over bit patterns of positive finite doubles: every binade, subnormals included.
    const std::uint64_t bits = sumlab::random_bits(1, i, 0) % 0x7ff0000000000000ull;
    check(sumlab::double_from_bits(bits));
    // Near 1 (f tiny, and both sides of the hfsq switch) and in [0.5, 2).
    check(1.0 + (sumlab::uniform_double(1, i, 1) - 0.5) * std::ldexp(1.0, -int(i % 40)));
    check(0.5 + 1.5 * sumlab::uniform_double(1, i, 2));
  }
  for (int k = -1074; k <= 1023; ++k) check(std::ldexp(1.0, k));
  std::printf("portable_log: max error %.4f ulp at x = %a; max distance from std::log %llu ulp\n",
              worst, worst_x, static_cast<unsigned long long>(worst_std));
  EXPECT_LT(worst, 1.0);
  EXPECT_LE(worst_std, 1u);
}

TEST(PortableExp, WithinOneUlpOfCorrectlyRounded) {
  UlpError err;
  double worst = 0, worst_x = 0;
  std::uint64_t worst_std = 0;
  auto check = [&](double x) {
    const double y = portable_exp(x);
    const double e = err(x, y, false);
    if (e > worst) worst = e, worst_x = x;
    worst_std = std::max(worst_std, sumlab::ulp_distance(y, std::exp(x)));
  };
  for (std::uint64_t i = 0; i < 50000; ++i) {
    check(-745.2 + (709.8 + 745.2) * sumlab::uniform_double(2, i, 0));   // the whole range
    check((sumlab::uniform_double(2, i, 1) - 0.5) * 4.0);                 // |x| < 2 (k = 0, +-1)
    check((sumlab::uniform_double(2, i, 2) - 0.5) * std::ldexp(1.0, -int(i % 60)));  // tiny
    check(-745.2 + 37.0 * sumlab::uniform_double(2, i, 3));               // subnormal results
  }
  std::printf("portable_exp: max error %.4f ulp at x = %a; max distance from std::exp %llu ulp\n",
              worst, worst_x, static_cast<unsigned long long>(worst_std));
  EXPECT_LT(worst, 1.0);
  EXPECT_LE(worst_std, 1u);
}

// |y - e^x| in ulps of the float e^x rounds to, with e^x from glibc's double exp (within 2^-52 of
// e^x: the measure is good to 2^-28 ulp); a subnormal result's ulp is 2^-149.
double expf_ulp_error(float x, float y) {
  const double e = std::exp(static_cast<double>(x));
  const double ulp = e < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(e) - 23);
  return std::fabs(static_cast<double>(y) - e) / ulp;
}

// Every 61st float (every float with SUMLAB_EXHAUSTIVE=1: about two minutes on one core), then every
// float from -87 to -104, where the result is subnormal. Measured on every float <= 0, subnormal
// results included: max 0.8908 ulp (x = -0x1.4ac0f6p+2). Every x > 0 gives exactly 1 (taken as 0).
TEST(PortableExpf, WithinOneUlpOnEveryFloat) {
  const char* all = std::getenv("SUMLAB_EXHAUSTIVE");
  const std::uint64_t stride = all != nullptr && std::string(all) == "1" ? 1 : 61;
  double worst = 0, worst_normal = 0;
  float worst_x = 0;
  std::uint64_t not_one = 0, checked = 0;
  auto check = [&](std::uint32_t bits) {
    const float x = sumlab::float_from_bits(bits), y = portable_expf_nonpositive(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(y)) << bits;
      return;
    }
    if (x > 0) {
      not_one += y != 1.0f;
      return;
    }
    ++checked;
    const double e = std::exp(static_cast<double>(x));
    const double err = expf_ulp_error(x, y);
    if (err > worst) worst = err, worst_x = x;
    if (e >= 0x1p-126) worst_normal = std::max(worst_normal, err);
  };
  for (std::uint64_t b = 0; b <= 0xffffffffull; b += stride) check(static_cast<std::uint32_t>(b));
  for (std::uint32_t b = 0xc2ae0000u; b <= 0xc2d00000u; ++b) check(b);  // -87 .. -104: subnormal results
  std::printf("portable_expf_nonpositive: %llu floats, max error %.4f ulp at x = %a, %.4f ulp where e^x is normal\n",
              static_cast<unsigned long long>(checked), worst, static_cast<double>(worst_x), worst_normal);
  EXPECT_EQ(not_one, 0u);
  EXPECT_LT(worst, 0.90);
  EXPECT_LT(worst_normal, 0.90);
}

// The same bound against MPFR's correctly rounded float at points spread over the whole range.
TEST(PortableExpf, WithinOneUlpOfMpfr) {
  mpfr_t e, d;
  mpfr_inits2(256, e, d, static_cast<mpfr_ptr>(nullptr));
  double worst = 0;
  for (std::uint64_t i = 0; i < 200000; ++i) {
    const float x = static_cast<float>(-104.0 * sumlab::uniform_double(3, i, 0));
    const float y = portable_expf_nonpositive(x);
    mpfr_set_flt(e, x, MPFR_RNDN);
    mpfr_exp(e, e, MPFR_RNDN);
    const float cr = mpfr_get_flt(e, MPFR_RNDN);
    if (std::isinf(cr) || std::isinf(y)) {
      EXPECT_EQ(cr, y) << x;
      continue;
    }
    const int ulp_exp = cr < 0x1p-126f ? -149 : std::ilogb(cr) - 23;
    mpfr_set_flt(d, y, MPFR_RNDN);
    mpfr_sub(d, d, e, MPFR_RNDN);
    mpfr_div_2si(d, d, ulp_exp, MPFR_RNDN);
    worst = std::max(worst, std::fabs(mpfr_get_d(d, MPFR_RNDN)));
  }
  mpfr_clears(e, d, static_cast<mpfr_ptr>(nullptr));
  std::printf("portable_expf_nonpositive: max error against MPFR %.4f ulp\n", worst);
  EXPECT_LT(worst, 0.90);
}

TEST(PortableMath, Specials) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(portable_log(1.0), 0.0);
  EXPECT_FALSE(std::signbit(portable_log(1.0)));
  EXPECT_EQ(portable_log(0.0), -inf);
  EXPECT_EQ(portable_log(-0.0), -inf);
  EXPECT_EQ(portable_log(inf), inf);
  EXPECT_TRUE(std::isnan(portable_log(-1.0)));
  EXPECT_TRUE(std::isnan(portable_log(-inf)));
  EXPECT_TRUE(std::isnan(portable_log(nan)));
  EXPECT_EQ(portable_log(std::ldexp(1.0, -1074)), std::log(std::ldexp(1.0, -1074)));
  EXPECT_EQ(portable_exp(0.0), 1.0);
  EXPECT_EQ(portable_exp(-0.0), 1.0);
  EXPECT_EQ(portable_exp(inf), inf);
  EXPECT_EQ(portable_exp(-inf), 0.0);
  EXPECT_TRUE(std::isnan(portable_exp(nan)));
  EXPECT_EQ(portable_exp(710.0), inf);
  EXPECT_EQ(portable_exp(709.78), std::exp(709.78));
  EXPECT_EQ(portable_exp(-746.0), 0.0);
  EXPECT_EQ(portable_exp(-745.0), std::ldexp(1.0, -1074));  // rounds up to the smallest subnormal
  EXPECT_LE(sumlab::ulp_distance(portable_exp(1.0), std::exp(1.0)), 1u);  // not correctly rounded
  EXPECT_EQ(sumlab::portable_sqrt(2.0), std::sqrt(2.0));
  const float finf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(portable_expf_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(portable_expf_nonpositive(-0.0f), 1.0f);
  EXPECT_EQ(portable_expf_nonpositive(finf), 1.0f);  // outside the domain: taken as 0
  EXPECT_EQ(portable_expf_nonpositive(88.0f), 1.0f);
  EXPECT_EQ(portable_expf_nonpositive(-finf), 0.0f);
  EXPECT_FALSE(std::signbit(portable_expf_nonpositive(-finf)));
  EXPECT_TRUE(std::isnan(portable_expf_nonpositive(std::nanf(""))));
  EXPECT_EQ(portable_expf_nonpositive(-103.972076f), 0x1p-149f);  // rounds up to the smallest subnormal
  EXPECT_EQ(portable_expf_nonpositive(-103.972084f), 0.0f);
  EXPECT_EQ(portable_expf_nonpositive(-1e-30f), 1.0f);
  EXPECT_EQ(portable_expf_nonpositive(-0x1p-25f), 1.0f);
  EXPECT_EQ(portable_expf_nonpositive(-0x1p-24f), 0x1.fffffep-1f);  // e^-u = 1 - u + u^2/2 rounds to 1 - u
}

// A hash of the exact result bits over fixed inputs. The expected values were produced by this
// implementation (x86-64, g++ -O2 -ffp-contract=off); the GPU build must reproduce them too.
std::uint64_t checksum(bool is_log) {
  std::uint64_t h = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const std::uint64_t bits = sumlab::random_bits(9, i, 0) % 0x7ff0000000000000ull;
    const double x = is_log ? sumlab::double_from_bits(bits)
                            : -745.2 + 1455.0 * sumlab::uniform_double(9, i, 1);
    h = sumlab::mix64(h ^ sumlab::double_to_bits(is_log ? portable_log(x) : portable_exp(x)));
  }
  return h;
}

TEST(PortableMath, GoldenBits) {
  EXPECT_EQ(checksum(true), 0x1f0a142fd8c761e6ull);
  EXPECT_EQ(checksum(false), 0xa2dac48eeb24e052ull);
  std::uint64_t h = 0;  // portable_expf_nonpositive over a stride of every float but the NaNs
  for (std::uint64_t b = 0; b <= 0xffffffffull; b += 4099) {
    const float x = sumlab::float_from_bits(static_cast<std::uint32_t>(b));
    if (!std::isnan(x)) h = sumlab::mix64(h ^ sumlab::to_bits(portable_expf_nonpositive(x)));
  }
  EXPECT_EQ(h, 0xf35d0a57acabcf52ull);
}

}  // namespace
