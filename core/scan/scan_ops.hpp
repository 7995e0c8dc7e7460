#pragma once
// The operators a scan runs, each a struct with
//   using Value = ...;                      the element type the scan carries
//   static Value identity();                the left identity of combine (exact arithmetic)
//   static Value right_identity();          e with combine(p, e) == p bit for bit for every p (NaN
//                                           payloads aside): the look-back's fold pads with it
//   static constexpr bool guard_steps;      how the GPU's warp scan and look-back fold skip a step:
//                                           true, a guarded combine (one to three instructions,
//                                           compiled predicated: plus, affine); false, every step
//                                           combined and selected or padded with right_identity
//                                           (max, segmented, whose guarded combines compiled to a
//                                           branch a step). Speed only: the bits are the same.
//   static constexpr bool exactly_associative;  combine is associative bit for bit (not only in
//                                           exact arithmetic) and identity() an identity on both
//                                           sides, so the GPU's look-back may reduce the aggregates
//                                           it finds as a tree: max only.
//   static Value combine(earlier, later);   "earlier then later": the scan's only operation
// The same code runs on the CPU (-ffp-contract=off) and in the modelled kernels (--fmad=false), so
// a combine is the same IEEE operations, rounded the same way, on both sides.
//
//   PlusOp<T>       a + b; one rounding per combine. Associative only in exact arithmetic: the
//                   scan's tree decides the bits.
//   MaxOp<T>        the larger; a NaN operand wins (the earlier one if both are NaN), and +0 wins
//                   over -0, so the value is commutative and associative bit for bit (NaN payloads
//                   aside): every algorithm and shape gives the same bits (exact, shape_invariant).
//   SegmentedOp<T>  (head, value) pairs, core/scan/segmented_op.hpp (shared with segmented
//                   reductions): restarts the running sum at every head.
//   AffineOp<T>     (a, b) pairs standing for the map h -> a h + b. Scanning them composes maps:
//                   combine(p, q) = q after p = (q.a p.a, q.a p.b + q.b). The b of the inclusive
//                   scan at t is h_t of h_t = a_t h_{t-1} + b_t with h_{-1} = 0: the linear
//                   recurrence as a scan. Three roundings per combine (two products, one sum; no
//                   fused multiply-add: the flags above keep them separate on both sides).
//
// Identities in floating point: combine(identity, x) is x for every finite x except a -0 input
// (0 + -0 = +0), and for AffineOp also except an infinite x.a (inf * 0 = NaN). Algorithms that
// combine with the identity (Blelloch's down-sweep) inherit these two exceptions; the ones that
// keep "no prefix yet" apart (serial, warp Hillis-Steele) do not.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/float_traits.hpp"
#include "core/hd.hpp"
#include "core/scan/segmented_op.hpp"

namespace sumlab::scan {

template <class T> struct PlusOp {
  using Value = T;
  using Scalar = T;
  static constexpr const char* name = "plus";
  SUMLAB_HD static Value identity() { return T(0); }
  SUMLAB_HD static Value right_identity() { return -T(0); }  // p + -0 is p, -0 included (p + +0 is not)
  static constexpr bool guard_steps = true;
  static constexpr bool exactly_associative = false;
  SUMLAB_HD static Value combine(const Value& earlier, const Value& later) { return earlier + later; }
};

template <class T> struct MaxOp {
  using Value = T;
  using Scalar = T;
  static constexpr const char* name = "max";
  SUMLAB_HD static Value identity() { return -std::numeric_limits<T>::infinity(); }
  SUMLAB_HD static Value right_identity() { return -std::numeric_limits<T>::infinity(); }
  static constexpr bool guard_steps = false;
  // The result is the first NaN if there is one, else the largest value with +0 above -0: the same
  // bits for every bracketing.
  static constexpr bool exactly_associative = true;
  // One selection, no branch (& and |, not && and ||, which compile to branches): a combine with
  // early returns compiled to a branch a step and ran the chained max scan at a third of the plus
  // scan's speed. x != x is the NaN test that compiles identically on host and device; equal values
  // that differ in their sign bit are -0 and +0, and the later wins exactly when it is the +0.
  SUMLAB_HD static Value combine(const Value& earlier, const Value& later) {
    const bool later_wins = (earlier == earlier) & ((later != later) | (earlier < later) |
                                                    ((earlier == later) & sign_bit(earlier) & !sign_bit(later)));
    return later_wins ? later : earlier;
  }

 private:
  SUMLAB_HD static bool sign_bit(const T& x) {
    typename FloatTraits<T>::Bits u;
    std::memcpy(&u, &x, sizeof u);
    return (u >> (8 * sizeof(T) - 1)) != 0;
  }
};

template <class T> struct SegmentedOp {
  using Value = Flagged<T>;
  using Scalar = T;
  static constexpr const char* name = "segmented";
  SUMLAB_HD static Value identity() { return Value{false, T(0)}; }
  SUMLAB_HD static Value right_identity() { return Value{false, -T(0)}; }
  static constexpr bool guard_steps = false;
  static constexpr bool exactly_associative = false;
  SUMLAB_HD static Value combine(const Value& earlier, const Value& later) {
    return segmented_combine(earlier, later);
  }
};

template <class T> struct Affine {
  T a = T(1);
  T b = T(0);
};

template <class T> struct AffineOp {
  using Value = Affine<T>;
  using Scalar = T;
  static constexpr const char* name = "affine";
  SUMLAB_HD static Value identity() { return Value{T(1), T(0)}; }
  SUMLAB_HD static Value right_identity() { return Value{T(1), -T(0)}; }  // (1 p.a, 1 p.b + -0)
  static constexpr bool guard_steps = true;
  static constexpr bool exactly_associative = false;
  SUMLAB_HD static Value combine(const Value& earlier, const Value& later) {
    const T a = later.a * earlier.a;
    const T ab = later.a * earlier.b;  // rounded on its own, then added: no FMA
    return Value{a, ab + later.b};
  }
};

// The scalar a study reads from a scan value: the value, the segment's running sum, or h_t.
template <class T> SUMLAB_HD inline T scalar_of(const T& v) { return v; }
template <class T> SUMLAB_HD inline T scalar_of(const Flagged<T>& v) { return v.value; }
template <class T> SUMLAB_HD inline T scalar_of(const Affine<T>& v) { return v.b; }

// Bitwise equality of scan values (NaN equal to any NaN, -0 != +0), for GPU-vs-model checks.
template <class T> inline bool same_bits(T x, T y) {
  if (std::isnan(x) && std::isnan(y)) return true;
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}
template <class T> inline bool same_bits(const Flagged<T>& x, const Flagged<T>& y) {
  return x.head == y.head && same_bits(x.value, y.value);
}
template <class T> inline bool same_bits(const Affine<T>& x, const Affine<T>& y) {
  return same_bits(x.a, y.a) && same_bits(x.b, y.b);
}

}  // namespace sumlab::scan
