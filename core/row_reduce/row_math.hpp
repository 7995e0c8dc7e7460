#pragma once
// The elementary functions of the row kernels, one definition for the CPU model and the GPU, so
// that both produce the same bits:
//   acc_exp   e^x for x <= 0, the only arguments a softmax takes (x - max, -|m_a - m_b|; NaN where
//             both are infinite). float: portable_expf_nonpositive, float + - * and fma only
//             (< 0.90 ulp, measured on every float <= 0; x > 0 is taken as 0); double: portable_exp
//             (+ - * / only, < 1 ulp, every x), both in core/portable_math.hpp. CUDA's expf/__expf
//             and glibc's expf are different functions and would not agree with each other in the
//             last bit.
//   acc_abs   |x| (exact: the sign bit cleared).
//   acc_fma   a * b + c rounded once (fmaf / fma on the host, the fma instruction on the GPU).
//   acc_sqrt  the IEEE correctly rounded square root (sqrtss / __fsqrt_rn, sqrt / __dsqrt_rn).
// Assumptions: IEEE binary32/64, round to nearest even, no FMA contraction beyond the explicit ones
// (host -ffp-contract=off, device --fmad=false), no flush to zero.
#include <limits>

#include "core/hd.hpp"
#include "core/portable_math.hpp"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace sumlab::row_reduce {

SUMLAB_HD inline float acc_exp(float x) { return portable_expf_nonpositive(x); }
SUMLAB_HD inline double acc_exp(double x) { return portable_exp(x); }

SUMLAB_HD inline float acc_abs(float x) { return fabsf(x); }
SUMLAB_HD inline double acc_abs(double x) { return fabs(x); }

SUMLAB_HD inline float acc_fma(float a, float b, float c) { return fmaf(a, b, c); }
SUMLAB_HD inline double acc_fma(double a, double b, double c) { return fma(a, b, c); }

SUMLAB_HD inline float acc_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}
SUMLAB_HD inline double acc_sqrt(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

template <class Acc> SUMLAB_HD constexpr Acc acc_inf() { return std::numeric_limits<Acc>::infinity(); }
template <class Acc> SUMLAB_HD constexpr Acc acc_nan() { return std::numeric_limits<Acc>::quiet_NaN(); }
template <class Acc> SUMLAB_HD inline bool acc_isnan(Acc x) {
#if defined(__CUDA_ARCH__)
  return isnan(x);
#else
  return std::isnan(x);
#endif
}
// Neither NaN nor +-Inf.
template <class Acc> SUMLAB_HD inline bool acc_isfinite(Acc x) {
#if defined(__CUDA_ARCH__)
  return isfinite(x);
#else
  return std::isfinite(x);
#endif
}

}  // namespace sumlab::row_reduce
