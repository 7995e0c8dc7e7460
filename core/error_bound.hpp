#pragma once
// Error bounds of summation, each a theorem valid for every n: the one place where sumlab turns
// "how the sum was computed" into "how far from the exact sum it can be". The registries
// (core/cpu_algorithms.cpp, core/gpu_kernel.cpp) pick one of these per algorithm or kernel; the
// CLI, the studies and the report only read the registry.
//
// Assumptions of every theorem here: binary floating point with round-to-nearest (ties to even or
// away: only |fl(z) - z| <= u|z| is used), no FMA contraction, no reassociation, and NO OVERFLOW
// (every input, partial sum and result finite). Underflow is harmless for sums: the sum of two
// floating-point numbers that lands in the subnormal range is exact, so the model
// fl(a + b) = (a + b)(1 + d), |d| <= u, holds for every addition and subtraction (Higham 2002,
// Thm 2.2 and the remark after it). Conversions to a narrower format (a wide accumulator's final
// rounding, bf16 addends) can underflow: those bounds add the half-spacing of the narrow format's
// subnormals, 2^(emin_sub - 1).
//
// Notation: n terms x_i, S = sum |x_i|, s = sum x_i (exact), u = 2^-p the unit roundoff of the
// working format, gamma_k = k u / (1 - k u) for k u < 1 (Higham 2002, Lemma 3.1).
//
// "No bound" is +infinity: where a theorem's condition fails (k u >= 1 for gamma_k, n u >= 1 for
// Sum2, ...), the functions return +inf and the lab reports "none", never a number that is not a
// bound. Every operation of a bound's evaluation is rounded outward (up, or down for what is
// subtracted or divided by), so the double is at least the theorem's expression at the doubles S
// and |s|; each bound grows with S and |s|, and the final factor (1 + 2^-40) covers their rounding
// to double (2^-53 relative each). So the number printed is an upper bound of the theorem's
// real-valued bound (tests/core/bound_arithmetic_test.cpp checks it against MPFR).
#include <cstdint>
#include <string_view>

#include "core/bfloat16.hpp"
#include "core/float_traits.hpp"

namespace sumlab {

// A binary floating-point format as the bounds see it: its precision p (u = 2^-p) and the
// exponent of its smallest subnormal.
struct FloatFormat {
  int precision;
  int min_subnormal_exp;
  double unit_roundoff() const;
  // 2^(min_subnormal_exp - 1): the largest underflow error. For float64 it is 2^-1075, which a
  // double cannot hold, and evaluates to 0; the term is 0 indeed, since every sum of doubles is a
  // multiple of 2^-1074 and so exact in the subnormal range (likewise u|s| below 2^-1021).
  double half_min_subnormal() const;
};
template <class T> constexpr FloatFormat format_of() {
  return {FloatTraits<T>::precision, FloatTraits<T>::min_subnormal_exp};
}
inline constexpr FloatFormat bfloat16_format{bfloat16_precision, -133};
// The accumulator one step wider than T, as serial_wide uses it: float -> double, double -> long
// double (x87 extended, 64-bit significand, on x86-64; equal to double where long double is).
template <class T> FloatFormat wider_format();

// What a bound reads about one sum. sum_abs and abs_sum are exact values rounded to double;
// quantisation is the a-posteriori term of a fixed-point sum (m * 2^(-k-1), m = inputs not on the
// grid 2^-k), 0 for every other algorithm.
struct BoundInput {
  std::uint64_t n = 0;
  double sum_abs = 0;  // S
  double abs_sum = 0;  // |s|
  double quantisation = 0;
};

// How a registry row cites its bound: the formula as text and its source.
struct BoundDoc {
  std::string_view formula;
  std::string_view source;
};

namespace bound {

// gamma_k in format f; +inf when k u >= 1.
double gamma(FloatFormat f, double k);

// Any summation tree (recursive, pairwise, blocked, a GPU reduction, a library's) in which every
// term passes through at most `depth` roundings: |s_hat - s| <= gamma_depth * S.
// Higham 2002, Lemma 3.1 applied to each term's path through the tree (Sec. 4.2: for recursive
// summation the depth is n - 1, for pairwise ceil(log2 n)); an addition of an exact zero (a padding
// identity) is exact and not counted.
// Condition: depth * u < 1.
double tree(FloatFormat f, std::uint64_t depth, const BoundInput& in);

// A tree whose last `adds` additions are float atomicAdds on GPU global memory (gpu_atomic), which
// flush subnormal operands and results to zero whatever -ftz says (PTX's atom/red .add.f32 on
// global memory; double's atomics keep them). Each such add moves the sum by less than 2^-126
// twice, an additive error that at most `depth` later roundings scale by at most 1 + gamma_depth:
// |s_hat - s| <= gamma_depth S + (1 + gamma_depth) adds 2^-125 for float (Higham 2002, Lemma 3.1,
// with these terms added), the tree's bound otherwise.
double atomic_tree(FloatFormat f, std::uint64_t depth, std::uint64_t adds, const BoundInput& in);

// A tree of `depth` roundings in a wider accumulator `acc`, rounded once to `out`:
// |s_hat - s| <= u_out |s| + (1 + u_out) gamma^acc_depth S + 2^(emin_sub,out - 1).
// Proof: the tree bound in acc, then one rounding of a value within gamma S of s.
double wide_tree(FloatFormat out, FloatFormat acc, std::uint64_t depth, const BoundInput& in);

// serial_bf16: each addend rounded to bfloat16 (through float for double input), then a left-to-
// right chain whose every partial sum is rounded to bfloat16. The bf16 sum of two bf16 numbers
// computed in float and rounded to bf16 is the correctly rounded bf16 sum: double rounding is
// innocuous for addition when the intermediate precision is >= 2p + 1 (Figueroa 1995; 24 >= 17).
// With r = relative and a = absolute error of one addend conversion,
//   |s_hat - s| <= r S + n a + gamma^bf16_{n-1} ((1 + r) S + n a).
// Condition: (n - 1) 2^-8 < 1, i.e. n <= 256: beyond it the chain can stall and no bound of this
// form holds (the seeds' 1e4 x 1.0 sums to 256).
double bf16_chain(FloatFormat in_format, const BoundInput& in);

// Kahan's compensated sum (core/kahan_sum.hpp), s = x_0, c = 0, then for each later x:
// y = x - c, t = s + y, c = (t - s) - y, s = t; the result is s.
// First order this is Knuth's 2u S (TAOCP vol. 2, 4.2.2 ex. 19; Higham 2002, Sec. 4.3), stated
// there with an unspecified O(n u^2) term. The explicit form used here, proved in the .cpp:
//   |s_hat - s| <= (u |s| + lambda S + (N lambda + u) C) / (1 - u),   N = n - 1,
//   lambda = u (2 + 7u + 6u^2),  kappa = 3u (1 + 2u)(1 + u),
//   C = kappa (1 + lambda) S / (1 - kappa - kappa lambda N)  (a bound on every |c|).
// Condition: kappa (1 + lambda N) < 1 (n up to about 1/(6u^2): 4.7e13 for float).
double kahan_chain(FloatFormat f, const BoundInput& in);

// gpu_kahan: Kahan chains of at most `chain` terms per thread (from (+0, +0)), then `levels`
// compensated combines on any path to the root (s = a.s + b.s with its exact TwoSum error e,
// c = (a.c + b.c) - e), result s - c. Proved in the .cpp by induction over the levels.
double kahan_tree(FloatFormat f, std::uint64_t chain, std::uint64_t levels, const BoundInput& in);

// Neumaier's sum (core/neumaier_sum.hpp) is Ogita-Rump-Oishi's Sum2 (its Fast2Sum branch gives the
// same exact error term as TwoSum): |s_hat - s| <= u |s| + gamma_{n-1}^2 S.
// Ogita, Rump, Oishi 2005, "Accurate sum and dot product", Prop. 4.5 (also with underflow).
// Condition: n u < 1.
double sum2(FloatFormat f, const BoundInput& in);

// A correctly rounded result: |s_hat - s| <= max(u |s|, 2^(emin_sub - 1)) (Higham 2002, Thm 2.2;
// the second term is half the subnormal spacing).
double correctly_rounded(FloatFormat f, const BoundInput& in);

// Fixed point at grid 2^-k: every q_i = RNE(x_i 2^k) is within 2^(-k-1) of x_i 2^k, the integers
// add exactly, and the total is rounded once: |s_hat - s| <= Q (1 + u) + max(u |s|, 2^(emin-1))
// with Q = m 2^(-k-1) the quantisation (core/fixed_point_sum.hpp; proof there).
double fixed_point(FloatFormat f, const BoundInput& in);

}  // namespace bound

// What a measured error says about its bound. The theorems assume finite inputs and no overflow,
// so a result is judged against its bound only when the exact sum and the result are finite:
//   within / exceeds   a finite bound holds / is broken (a bug in the algorithm, the bound or the
//                      measurement: the lab raises an alarm);
//   no_bound           the theorem's condition fails for this n (the bound is +inf): no claim;
//   special_input      an input is NaN or +-Inf: the result follows the specials table instead
//                      (docs/special-values.md), errors are undefined;
//   exact_overflow     the inputs are finite but their exact sum rounds to +-Inf in T;
//   intermediate_overflow  the exact sum is finite but the result is not: a partial sum overflowed
//                      (outside every theorem's hypothesis; reported, counted, never "within");
//   failed             no result to judge: an external subject's call failed (the row says why).
enum class Verdict { within, exceeds, no_bound, special_input, exact_overflow, intermediate_overflow, failed };
std::string_view to_string(Verdict v);

// The facts a verdict needs about one measurement.
struct Judged {
  bool input_special = false;  // an input is NaN or +-Inf
  bool exact_overflows = false;  // finite inputs whose correctly rounded sum is +-Inf
  bool result_finite = true;
  double abs_error = 0;  // |result - exact sum|
};
Verdict judge(const Judged& m, double bound);

}  // namespace sumlab
