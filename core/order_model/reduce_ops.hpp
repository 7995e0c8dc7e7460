#pragma once
// The arithmetic of each modelled GPU reduction, written once and compiled for both sides.
//
// The CUDA kernels (gpu/) and the CPU order model (core/order_model/) call these SUMLAB_HD
// functions, so the only thing that can differ between the two is the ORDER in which they are
// applied, which is exactly what the model reproduces. Assumptions: IEEE binary32/64 with
// round-to-nearest-even on both sides, no FMA contraction (the host builds with -ffp-contract=off,
// the modelled kernels with --fmad=false), no flush-to-zero (nvcc's default -ftz=false), no
// reassociation. Each operation is a plain IEEE add/subtract, so one operation gives the same bits
// on the CPU and the GPU; only NaN payloads may differ (the GPU returns the canonical NaN), which
// is why comparisons treat every NaN as equal (same_bits below).
//
// An op has:  Acc identity();           the value an idle thread contributes (+0)
//             Acc leaf(In x);            an element loaded as it is (the classic trees' first load)
//             Acc add(Acc a, In x);      one step of a thread's sequential chain over its elements
//             Acc combine(Acc a, Acc b); one node of a warp/block/cross-block tree (a = own value,
//                                        b = the partner's), also the chain step over partials
//             Out finish(Acc a);         the value returned
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/gpu_kernel.hpp"
#include "core/hd.hpp"

namespace sumlab {

// Plain sum in T.
template <class T> struct PlainSumOp {
  using In = T;
  using Acc = T;
  using Out = T;
  SUMLAB_HD static Acc identity() { return T(0); }
  SUMLAB_HD static Acc leaf(In x) { return x; }
  SUMLAB_HD static Acc add(Acc a, In x) { return a + x; }
  SUMLAB_HD static Acc combine(Acc a, Acc b) { return a + b; }
  SUMLAB_HD static Out finish(Acc a) { return a; }
};

// float input, double accumulator in every stage, one rounding to float at the end. The widening
// (float)->double is exact, so every add is a double add.
struct DoubleAccOp {
  using In = float;
  using Acc = double;
  using Out = float;
  SUMLAB_HD static Acc identity() { return 0.0; }
  SUMLAB_HD static Acc leaf(In x) { return static_cast<double>(x); }
  SUMLAB_HD static Acc add(Acc a, In x) { return a + static_cast<double>(x); }
  SUMLAB_HD static Acc combine(Acc a, Acc b) { return a + b; }
  SUMLAB_HD static Out finish(Acc a) { return static_cast<float>(a); }
};

// A Kahan accumulator: the represented value is s - c (c holds the negative of the low part lost
// by the additions that produced s).
template <class T> struct KahanPair {
  T s;
  T c;
};

// The exact sum of two floats as a pair (s, e), s = RN(a + b), s + e = a + b: Knuth's TwoSum
// (6 operations, any magnitudes) and Dekker's Fast2Sum (3 operations, needs exponent(a) >=
// exponent(b)). Both stay exact under gradual underflow.
template <class T> struct TwoSumOut {
  T s;
  T e;
};
template <class T> SUMLAB_HD TwoSumOut<T> two_sum(T a, T b) {
  const T s = a + b;
  const T bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
template <class T> SUMLAB_HD TwoSumOut<T> fast_two_sum(T a, T b) {
  const T s = a + b;
  return {s, b - (s - a)};
}

// Kahan inside each thread (the serial Kahan step of core/kahan_sum.hpp, starting from (+0, +0)),
// and a compensated combine of two pairs for every tree node:
//   s = a.s + b.s, e = the exact rounding error of that add (Knuth's TwoSum, 6 operations, valid
//   for any magnitudes), c = (a.c + b.c) - e, so s - c = a.s - a.c + b.s - b.c up to the rounding
//   of the small compensation terms. The result is s - c, rounded once.
// Infinities make TwoSum's Inf - Inf = NaN in some combine, so any infinity, given or reached by
// overflow, gives NaN (the CPU Kahan keeps +-Inf when it is last: docs/special-values.md).
template <class T> struct KahanOp {
  using In = T;
  using Acc = KahanPair<T>;
  using Out = T;
  SUMLAB_HD static Acc identity() { return Acc{T(0), T(0)}; }
  SUMLAB_HD static Acc leaf(In x) { return Acc{x, T(0)}; }
  SUMLAB_HD static Acc add(Acc a, In x) {
    const T y = x - a.c;
    const T t = a.s + y;
    const T c = (t - a.s) - y;
    return Acc{t, c};
  }
  SUMLAB_HD static Acc combine(Acc a, Acc b) {
    const TwoSumOut<T> t = two_sum(a.s, b.s);
    return Acc{t.s, (a.c + b.c) - t.e};
  }
  SUMLAB_HD static Out finish(Acc a) { return a.s - a.c; }
};

// A double-word number hi + lo with |lo| <= ulp(hi)/2 (hi is the rounding of hi + lo).
template <class T> struct DoubleWord {
  T hi;
  T lo;
};

// A double-word accumulator in every stage: each add, of an element (entering as (x, 0)) or of two
// partials, is AccurateDWPlusDW (Joldes, Muller, Popescu, ACM TOMS 2017, Algorithm 6), whose
// relative error is at most 3u^2 + 13u^3, so the tree behaves as a plain tree in a (2p-2)-bit
// format (the bound of core/gpu_kernel.cpp's row). The result is hi: the sum rounded once.
// An infinity makes some TwoSum compute Inf - Inf, so the result is NaN (as gpu_kahan).
template <class T> struct DoubleWordOp {
  using In = T;
  using Acc = DoubleWord<T>;
  using Out = T;
  SUMLAB_HD static Acc identity() { return Acc{T(0), T(0)}; }
  SUMLAB_HD static Acc leaf(In x) { return Acc{x, T(0)}; }
  SUMLAB_HD static Acc add(Acc a, In x) { return combine(a, leaf(x)); }
  SUMLAB_HD static Acc combine(Acc a, Acc b) {
    const TwoSumOut<T> h = two_sum(a.hi, b.hi);
    const TwoSumOut<T> l = two_sum(a.lo, b.lo);
    const TwoSumOut<T> v = fast_two_sum(h.s, h.e + l.s);
    const TwoSumOut<T> z = fast_two_sum(v.s, l.e + v.e);
    return Acc{z.s, z.e};
  }
  SUMLAB_HD static Out finish(Acc a) { return a.hi; }
};

// Bitwise equality, except that any two NaNs are equal: IEEE leaves NaN payloads to the
// implementation (x86 propagates an operand's payload, NVIDIA GPUs return the canonical NaN).
template <class T> SUMLAB_HD bool same_bits(T a, T b) {
  if (a != a && b != b) return true;
  if constexpr (sizeof(T) == 4) {
    std::uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
  } else {
    std::uint64_t x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    return x == y;
  }
}

// The Op a shuffle-family kernel runs on input T: calls f.template operator()<Op>() and returns
// true, or returns false when k is not of the shuffle family or takes no T input. The GPU launcher
// and the CPU model both dispatch through here, so they cannot pick different arithmetic.
template <class T, class F> bool with_shuffle_op(GpuKernel k, F&& f) {
  switch (k) {
    case GpuKernel::two_pass:
    case GpuKernel::atomic:
    case GpuKernel::last_block: f.template operator()<PlainSumOp<T>>(); return true;
    case GpuKernel::kahan: f.template operator()<KahanOp<T>>(); return true;
    case GpuKernel::double_acc:
      if constexpr (std::is_same_v<T, float>) {
        f.template operator()<DoubleAccOp>();
        return true;
      }
      return false;
    case GpuKernel::double_word: f.template operator()<DoubleWordOp<T>>(); return true;
    default: return false;
  }
}

}  // namespace sumlab
