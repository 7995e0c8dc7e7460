#pragma once
// portable_log and portable_exp: the natural logarithm and exponential of a double, built from
// +, -, *, / and exact bit manipulation only, and portable_expf_nonpositive, the exponential of a
// float x <= 0, which adds explicit fused multiply-adds (at the end), so that the same source gives
// the same bits on the CPU and the GPU. libm's log/exp (and CUDA's) are not correctly rounded and
// differ between implementations; IEEE +, -, *, /, sqrt and fma are correctly rounded everywhere,
// so a function made of them alone is reproducible, provided the compiler fuses no multiply-add of
// its own: the host is built with -ffp-contract=off and GPU code with --fmad=false
// (cmake/SumlabFlags.cmake).
//
// Algorithms: those of fdlibm's e_log.c and e_exp.c (Sun Microsystems, 1993; the notice below),
// re-expressed with 64-bit words; the polynomial coefficients are fdlibm's, given here as exact
// bit patterns.
//   log: x = 2^k (1+f) with sqrt(2)/2 < 1+f < sqrt(2); s = f/(2+f); log(1+f) = 2s + s R(s^2)
//        with a degree-14 Remez polynomial R (|error| < 2^-58.45); log x = k ln2_hi + (f - (hfsq -
//        (s (hfsq + R) + k ln2_lo))) with ln2 = ln2_hi + ln2_lo and k ln2_hi exact.
//   exp: x = k ln2 + r, |r| <= ln2/2, r = hi - lo (Cody-Waite, k ln2_hi exact); exp(r) = 1 + r +
//        r c/(2 - c) with c = r - r^2 P(r^2), P a degree-5 Remez polynomial (|error| < 2^-59);
//        then scale by 2^k with exact bit arithmetic (one rounding when the result is subnormal).
// Accuracy (fdlibm's analysis: < 1 ulp): measured against MPFR's correctly rounded values on
// 10^6 points over 2^-1074 .. 2^1024 (log) and -745.2 .. 709.8 (exp): max error 0.811 ulp (log),
// 0.857 ulp (exp) (tests/core/portable_math_test.cpp); at most 1 ulp from glibc's std::log /
// std::exp on the same points.
// Specials: log(NaN) = NaN, log(x < 0) = NaN, log(+-0) = -Inf, log(+Inf) = +Inf;
// exp(NaN) = NaN, exp(+Inf) = +Inf, exp(-Inf) = +0, exp(x > 709.78...) = +Inf,
// exp(x < -745.13...) = +0. No floating-point exceptions are raised on purpose.
// portable_sqrt is the IEEE correctly rounded square root (std::sqrt on the host, sqrt in device
// code), reproducible as is.
//
// ====================================================
// Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//
// Developed at SunSoft, a Sun Microsystems, Inc. business.
// Permission to use, copy, modify, and distribute this
// software is freely granted, provided that this notice
// is preserved.
// ====================================================
#include <cstdint>

#include "core/float_traits.hpp"
#include "core/hd.hpp"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#include <cstring>
#endif

namespace sumlab {

SUMLAB_HD inline std::uint64_t double_to_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

SUMLAB_HD inline double double_from_bits(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

SUMLAB_HD inline float float_from_bits(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

// a * b rounded once, for a product used negated as well: on the GPU by the rounded-multiply
// intrinsic, which the compiler keeps as one product, where from a * b with a constant operand it
// folded each negation into a product of its own (RN(-x) = -RN(x): the same bits, one more
// instruction).
SUMLAB_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
SUMLAB_HD inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

SUMLAB_HD inline double portable_sqrt(double x) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(x);
#else
  return std::sqrt(x);
#endif
}

namespace detail {
// 2^k for -1022 <= k <= 1023, exactly.
SUMLAB_HD inline double pow2(int k) {
  return double_from_bits(static_cast<std::uint64_t>(k + 1023) << 52);
}
constexpr std::uint64_t kNanBits = 0x7ff8000000000000ull;
constexpr std::uint64_t kInfBits = 0x7ff0000000000000ull;
}  // namespace detail

SUMLAB_HD inline double portable_log(double x) {
  const double ln2_hi = double_from_bits(0x3fe62e42fee00000ull);  // 6.93147180369123816490e-01
  const double ln2_lo = double_from_bits(0x3dea39ef35793c76ull);  // 1.90821492927058770002e-10
  const double Lg1 = double_from_bits(0x3fe5555555555593ull);     // 6.666666666666735130e-01
  const double Lg2 = double_from_bits(0x3fd999999997fa04ull);     // 3.999999999940941908e-01
  const double Lg3 = double_from_bits(0x3fd2492494229359ull);     // 2.857142874366239149e-01
  const double Lg4 = double_from_bits(0x3fcc71c51d8e78afull);     // 2.222219843214978396e-01
  const double Lg5 = double_from_bits(0x3fc7466496cb03deull);     // 1.818357216161805012e-01
  const double Lg6 = double_from_bits(0x3fc39a09d078c69full);     // 1.531383769920937332e-01
  const double Lg7 = double_from_bits(0x3fc2f112df3e5244ull);     // 1.479819860511658591e-01

  std::uint64_t u = double_to_bits(x);
  int k = 0;
  if (u >= 0x7ff0000000000000ull) {  // +Inf, NaN, or negative (sign bit set)
    if (u == detail::kInfBits) return x;
    if ((u & 0x7fffffffffffffffull) == 0) return double_from_bits(detail::kInfBits | (1ull << 63));
    return double_from_bits(detail::kNanBits);
  }
  if (u < 0x0010000000000000ull) {  // +0 or subnormal
    if (u == 0) return double_from_bits(detail::kInfBits | (1ull << 63));  // log(+0) = -Inf
    x *= double_from_bits(0x4350000000000000ull);                         // 2^54, exact
    u = double_to_bits(x);
    k = -54;
  }
  k += static_cast<int>(u >> 52) - 1023;
  // hx: the top 20 bits of the fraction (fdlibm's high word without the exponent).
  const std::uint32_t hx = static_cast<std::uint32_t>(u >> 32) & 0x000fffffu;
  // Fractions at or above 0x6a09c (1 + f >= ~sqrt(2)) are halved: exponent field 0x3fe, k + 1.
  const std::uint32_t i = (hx + 0x95f64u) & 0x100000u;
  const std::uint64_t reduced =
      (u & 0x000fffffffffffffull) | (static_cast<std::uint64_t>(i ^ 0x3ff00000u) << 32);
  k += static_cast<int>(i >> 20);
  const double f = double_from_bits(reduced) - 1.0;  // exact (Sterbenz)
  const double dk = static_cast<double>(k);

  if (((2 + hx) & 0x000fffffu) < 3) {  // -2^-20 <= f < 2^-20: a short series suffices
    if (f == 0.0) return k == 0 ? 0.0 : dk * ln2_hi + dk * ln2_lo;
    const double R = f * f * (0.5 - 0.33333333333333333 * f);
    return k == 0 ? f - R : dk * ln2_hi - ((R - dk * ln2_lo) - f);
  }
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  // fdlibm's switch: the hfsq form is more accurate for f away from 0 (hx in (0x6147a, 0x6b851)).
  const int sel = (static_cast<int>(hx) - 0x6147a) | (0x6b851 - static_cast<int>(hx));
  if (sel > 0) {
    const double hfsq = 0.5 * f * f;
    return k == 0 ? f - (hfsq - s * (hfsq + R))
                  : dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
  }
  return k == 0 ? f - s * (f - R) : dk * ln2_hi - ((s * (f - R) - dk * ln2_lo) - f);
}

SUMLAB_HD inline double portable_exp(double x) {
  const double ln2_hi = double_from_bits(0x3fe62e42fee00000ull);  // 6.93147180369123816490e-01
  const double ln2_lo = double_from_bits(0x3dea39ef35793c76ull);  // 1.90821492927058770002e-10
  const double inv_ln2 = double_from_bits(0x3ff71547652b82feull); // 1.44269504088896338700e+00
  const double P1 = double_from_bits(0x3fc555555555553eull);      // 1.66666666666666019037e-01
  const double P2 = double_from_bits(0xbf66c16c16bebd93ull);      // -2.77777777770155933842e-03
  const double P3 = double_from_bits(0x3f11566aaf25de2cull);      // 6.61375632143793436117e-05
  const double P4 = double_from_bits(0xbebbbd41c5d26bf1ull);      // -1.65339022054652515390e-06
  const double P5 = double_from_bits(0x3e66376972bea4d0ull);      // 4.13813679705723846039e-08
  const double o_threshold = double_from_bits(0x40862e42fefa39efull);  // 7.09782712893383973e+02
  const double u_threshold = double_from_bits(0xc0874910d52d3051ull);  // -7.4513321910194110e+02

  const std::uint64_t u = double_to_bits(x);
  const std::uint64_t ax = u & 0x7fffffffffffffffull;
  if (ax >= detail::kInfBits) {  // NaN or +-Inf
    if (ax > detail::kInfBits) return x;
    return (u >> 63) ? 0.0 : x;
  }
  if (x > o_threshold) return double_from_bits(detail::kInfBits);
  if (x < u_threshold) return 0.0;

  const std::uint32_t hx = static_cast<std::uint32_t>(ax >> 32);  // high word of |x|
  double hi = 0.0, lo = 0.0, r;
  int k = 0;
  if (hx > 0x3fd62e42u) {    // |x| > ln2/2
    if (hx < 0x3ff0a2b2u) {  // |x| < 1.5 ln2: k = +-1
      k = (u >> 63) ? -1 : 1;
    } else {
      k = static_cast<int>(inv_ln2 * x + ((u >> 63) ? -0.5 : 0.5));  // truncation: round(x/ln2)
    }
    const double dk = static_cast<double>(k);
    hi = x - dk * ln2_hi;  // exact: k ln2_hi has 32 trailing zero bits
    lo = dk * ln2_lo;
    r = hi - lo;
  } else if (hx < 0x3e300000u) {  // |x| < 2^-28: exp(x) = 1 + x to within half an ulp
    return 1.0 + x;
  } else {
    r = x;
  }

  const double t = r * r;
  const double c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  if (k == 0) return 1.0 - ((r * c) / (c - 2.0) - r);
  const double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);  // exp(r), in [0.70, 1.42]
  if (k >= -1021) {
    // k <= 1024; 2^1024 is not a double, so scale in two exact steps there.
    return k == 1024 ? y * 2.0 * detail::pow2(1023) : y * detail::pow2(k);
  }
  // Subnormal result: y * 2^(k + 1000) is exact (normal), and * 2^-1000 rounds once.
  return y * detail::pow2(k + 1000) * detail::pow2(-1000);
}

// portable_expf_nonpositive: e^x for a float x <= 0 (the only arguments a softmax has: x - max,
// -|m_a - m_b|), in float + - *, fused multiply-adds and exact bit arithmetic only (no division, no
// double). An fma is one correctly rounded operation, fmaf on the host and __fmaf_rn on the GPU
// alike, so it is as reproducible as + - *; what the build must never do is fuse a * b + c on its
// own (-ffp-contract=off, --fmad=false). 17 arithmetic instructions on sm_90 (cuobjdump), where
// the float exp of + - * alone it replaces took 32.
//   domain     x > 0 is taken as 0 (e^0 = 1); NaN -> NaN; x < -104 as -104 (e^-104 < 2^-150
//              rounds to +0), so -Inf -> +0.
//   reduction  x = k ln2 + r, k = round(x / ln2) (fma(x, 1/ln2, 1.5 * 2^23), the shift rounds to
//              an integer, k in [-150, 0]); hi = fma(-k, ln2_hi, x) is exact (ln2_hi = RN(ln2) is a
//              multiple of 2^-24, x is one where k != 0 (|x| >= 0.3466 > 2^-2 gives a multiple of
//              2^-25 at worst) and |hi| <= 0.35, so hi fits 24 bits); lo = k ln2_lo with ln2_lo =
//              RN(ln2 - ln2_hi), |lo| < 3e-7; r = hi - lo.
//   polynomial q = r^2 P(r), P of degree 4 fitted to (e^r - 1 - r) / r^2 on [-0.3467, 0.3467], by
//              Horner's rule in fmas; t = fma(r^2, P, -lo) = q - lo with one rounding.
//   assembly   e^r = y = 1 + (hi + t): hi is exact and carries most of r, so r's rounding reaches
//              only q; y in [0.70, 1.42]. Computed as y 2^-25 = fma(hi + t, 2^-25, 2^-25), which
//              rounds where 1 + (hi + t) would and to the same bits scaled (a power of two, far
//              from the subnormals).
//   scaling    y 2^k = (y 2^-25) 2^(k+25): 2^(k+25) is a normal float for every k in [-150, 0], and
//              the product rounds once, only where the result is subnormal. A NaN passes every
//              step as NaN (the clamps compare, and the scaling multiplies).
// Error (a sketch, ulp of the result): the last addition 1/2; hi + t at most 2^-26, 1/4 ulp where
// y < 1; t's roundings, r's through q, and P's fit (< 0.08 * 2^-24) the rest: < 1 ulp, faithful.
// Measured against glibc's double exp (within 2^-52 of e^x, so the measure is good to 2^-28 ulp)
// on every float from -104 to 0: max 0.8908 ulp (x = -0x1.4ac0f6p+2, e^x normal), subnormal results
// included; against MPFR's correctly rounded float on 2 * 10^5 points, 0.8668 ulp
// (tests/core/portable_math_test.cpp, every float with SUMLAB_EXHAUSTIVE=1; a stride of them
// otherwise). Specials: e^-0 = e^+0 = 1 exactly; e^x rounds to +0 exactly where e^x < 2^-150.
SUMLAB_HD inline float portable_expf_nonpositive(float x) {
  const float inv_ln2 = float_from_bits(0x3fb8aa3bu);  // 1.44269502e+00
  const float ln2_hi = float_from_bits(0x3f317218u);   // 6.93147182e-01, RN(ln2)
  const float ln2_lo = float_from_bits(0xb102e308u);   // -1.90465421e-09, RN(ln2 - ln2_hi)
  const float shift = float_from_bits(0x4b400000u);    // 1.5 * 2^23: t + shift rounds t to an integer
  const float P1 = float_from_bits(0x3e2aaa47u);       // 1.66665182e-01
  const float P2 = float_from_bits(0x3d2aaa2fu);       // 4.16662060e-02
  const float P3 = float_from_bits(0x3c091dbdu);       // 8.36890657e-03
  const float P4 = float_from_bits(0x3ab6da31u);       // 1.39505242e-03

  float xc = x > 0.0f ? 0.0f : x;  // NaN passes both clamps (comparisons false)
  xc = xc < -104.0f ? -104.0f : xc;
  const float ks = fmaf(xc, inv_ln2, shift);
  const float kf = ks - shift;
  const int k = static_cast<int>(to_bits(ks) - to_bits(shift));  // kf as an integer
  const float hi = fmaf(kf, -ln2_hi, xc);
  const float lo = mul_rn(kf, ln2_lo);  // k ln2_lo rounded, used negated twice
  const float r = hi - lo;
  float p = fmaf(P4, r, P3);
  p = fmaf(p, r, P2);
  p = fmaf(p, r, P1);
  p = fmaf(p, r, 0.5f);
  const float t = fmaf(r * r, p, -lo);
  const float tiny = float_from_bits(0x33000000u);  // 2^-25
  const float y_tiny = fmaf(hi + t, tiny, tiny);    // (1 + (hi + t)) 2^-25, one rounding
  return y_tiny * float_from_bits(static_cast<std::uint32_t>(k + 25 + 127) << 23);  // * 2^(k+25)
}

}  // namespace sumlab
