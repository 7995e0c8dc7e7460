#include "core/cpu_algorithms.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "core/bfloat16.hpp"
#include "core/exact_sum.hpp"
#include "core/fixed_point_sum.hpp"
#include "core/float_traits.hpp"
#include "core/kahan_sum.hpp"
#include "core/neumaier_sum.hpp"
#include "core/numpy_pairwise_sum.hpp"
#include "core/pairwise_sum.hpp"
#include "core/serial_sum.hpp"

namespace sumlab {
namespace {

template <class T> SumResult<T> just(T v) {
  SumResult<T> r;
  r.value = v;
  return r;
}

// The accumulator one step wider than T: float -> double, double -> long double (x87 extended,
// 64-bit significand, on x86-64; on targets where long double == double this is plain serial).
template <class T> struct Wider;
template <> struct Wider<float> { using type = double; };
template <> struct Wider<double> { using type = long double; };

template <class T> SumResult<T> run_serial(std::span<const T> x) { return just<T>(serial_sum<T>(x)); }
template <class T> SumResult<T> run_serial_wide(std::span<const T> x) {
  return just<T>(serial_sum<T, typename Wider<T>::type>(x));
}
template <class T> SumResult<T> run_serial_bf16(std::span<const T> x) {
  if (x.empty()) return just<T>(T(0));
  float s = round_to_bfloat16(static_cast<float>(x[0]));
  for (std::size_t i = 1; i < x.size(); ++i)
    s = round_to_bfloat16(s + round_to_bfloat16(static_cast<float>(x[i])));
  return {static_cast<T>(s), 0, "accumulator and addends rounded to bfloat16 (8-bit significand)"};
}
template <class T> SumResult<T> run_pairwise(std::span<const T> x) { return just<T>(pairwise_sum<T>(x)); }
template <class T> SumResult<T> run_numpy(std::span<const T> x) {
  return just<T>(numpy_pairwise_sum<T>(x));
}
template <class T> SumResult<T> run_kahan(std::span<const T> x) { return just<T>(kahan_sum<T>(x)); }
template <class T> SumResult<T> run_neumaier(std::span<const T> x) { return just<T>(neumaier_sum<T>(x)); }
template <class T> SumResult<T> run_fixed(std::span<const T> x) { return fixed_point_sum<T>(x); }
template <class T> SumResult<T> run_exact(std::span<const T> x) { return just<T>(exact_sum<T>(x)); }

template <class T> double bound_serial(const BoundInput& in) {
  return bound::tree(format_of<T>(), in.n > 0 ? in.n - 1 : 0, in);
}
template <class T> double bound_serial_wide(const BoundInput& in) {
  return bound::wide_tree(format_of<T>(), wider_format<T>(), in.n > 0 ? in.n - 1 : 0, in);
}
template <class T> double bound_serial_bf16(const BoundInput& in) { return bound::bf16_chain(format_of<T>(), in); }
template <class T> double bound_pairwise(const BoundInput& in) {
  return bound::tree(format_of<T>(), pairwise_depth(in.n), in);
}
template <class T> double bound_numpy(const BoundInput& in) {
  return bound::tree(format_of<T>(), numpy_pairwise_depth(in.n), in);
}
template <class T> double bound_kahan(const BoundInput& in) { return bound::kahan_chain(format_of<T>(), in); }
template <class T> double bound_neumaier(const BoundInput& in) { return bound::sum2(format_of<T>(), in); }
template <class T> double bound_fixed(const BoundInput& in) { return bound::fixed_point(format_of<T>(), in); }
template <class T> double bound_exact(const BoundInput& in) { return bound::correctly_rounded(format_of<T>(), in); }

constexpr std::string_view tree_source = "Higham 2002, Lemma 3.1 on each term's path (Sec. 4.2)";

// The tree algorithms over traced numbers: the same templates, so the same additions in the same order.
using order_model::TracedNumber;
template <class T> using Traced = std::span<const TracedNumber<T>>;

template <class T> const std::array<CpuAlgorithm<T>, 10>& registry() {
  static const std::array<CpuAlgorithm<T>, 10> algorithms{{
      {{"serial", "left to right in the input precision",
        "((x0 + x1) + x2) + ... one dependency chain",
        {"gamma(n-1) S; none once (n-1)u >= 1", tree_source}, Determinism::run_to_run},
       run_serial<T>, bound_serial<T>, [](Traced<T> x) { return serial_sum<TracedNumber<T>>(x); }},
      {{"serial_wide", "left to right in a wider accumulator (float->double, double->long double)",
        "((x0 + x1) + x2) + ... in the wider type, rounded once to the input type at the end",
        {"u|s| + (1+u) gamma_wide(n-1) S + 2^(emin-1)",
         "Higham 2002, Lemma 3.1 in the wide format, Thm 2.2 for the final rounding"},
        Determinism::run_to_run},
       run_serial_wide<T>, bound_serial_wide<T>, nullptr},
      {{"serial_bf16", "left to right with a bfloat16 accumulator (8-bit significand)",
        "((x0 + x1) + x2) + ..., every addend and partial sum rounded to bfloat16",
        {"r S + n a + gamma_bf16(n-1) ((1+r) S + n a), r = 2^-8 (float in); none for n > 256",
         "Higham 2002, Lemma 3.1 in bfloat16; Figueroa 1995 (rounding through float is innocuous)"},
        Determinism::run_to_run},
       run_serial_bf16<T>, bound_serial_bf16<T>, nullptr},
      {{"pairwise", "recursive halving down to single elements (the textbook tree)",
        "sum(x[0:n/2]) + sum(x[n/2:n]), recursively",
        {"gamma(ceil(log2 n)) S", tree_source}, Determinism::run_to_run},
       run_pairwise<T>, bound_pairwise<T>, [](Traced<T> x) { return pairwise_sum<TracedNumber<T>>(x); }},
      {{"pairwise_b128", "recursive halving down to serial runs of <=128 elements",
        "sum(x[0:n/2]) + sum(x[n/2:n]) down to runs of <=128, each run serial",
        {"gamma(d) S, d = 127 + ceil(log2(n/128)) (pairwise_depth)", tree_source}, Determinism::run_to_run},
       [](std::span<const T> x) { return pairwise_with_base<T>(x, 128); },
       [](const BoundInput& in) { return pairwise_bound<T>(128, in); },
       [](Traced<T> x) { return pairwise_sum<TracedNumber<T>>(x, 128); }},
      {{"numpy_pairwise", "NumPy's blocked pairwise sum: 8 partial sums over blocks of <=128",
        "halve (at multiples of 8) down to <=128, then 8 strided chains and a 3-level tree",
        {"gamma(d) S, d = numpy_pairwise_depth(n) ~ n_leaf/8 + 2 + log2(n/128)", tree_source},
        Determinism::run_to_run},
       run_numpy<T>, bound_numpy<T>, [](Traced<T> x) { return numpy_pairwise_sum<TracedNumber<T>>(x); }},
      {{"kahan", "Kahan's compensated sum (running correction of the lost low bits)",
        "serial; y = x - c; t = s + y; c = (t - s) - y; s = t",
        {"(u|s| + lambda S + (N lambda + u) C) / (1-u) = u|s| + 2u S + ~6 n u^2 S",
         "Knuth, TAOCP 2, 4.2.2 ex. 19 (first order); all orders: proof in core/error_bound.cpp"},
        Determinism::run_to_run},
       run_kahan<T>, bound_kahan<T>, nullptr},
      {{"neumaier", "Neumaier's (Kahan-Babuska) sum: exact error of each add kept aside",
        "serial; t = s + x; c += Fast2Sum error of (s, x); s = t; result s + c",
        {"u|s| + gamma(n-1)^2 S; none once n u >= 1", "Ogita, Rump, Oishi 2005, Prop. 4.5 (Sum2)"},
        Determinism::run_to_run},
       run_neumaier<T>, bound_neumaier<T>, nullptr},
      {{"fixed_point", "integers at a binary scale from max|x|, added exactly in 128 bits",
        "q_i = round(x_i * 2^k) in int64, any order, integer sum * 2^-k rounded once",
        {"Q (1+u) + max(u|s|, 2^(emin-1)), Q = m 2^(-k-1) (m inputs off the grid)",
         "core/fixed_point_sum.hpp; Higham 2002, Thm 2.2 for the final rounding"},
        Determinism::shape_invariant},
       run_fixed<T>, bound_fixed<T>, nullptr},
      {{"exact", "superaccumulator over the whole exponent range, correctly rounded",
        "integer limbs from 2^emin_sub upward, any order, rounded once (to nearest even)",
        {"max(u|s|, 2^(emin-1)): correctly rounded", "Higham 2002, Thm 2.2 (one rounding of s)"},
        Determinism::shape_invariant},
       run_exact<T>, bound_exact<T>, nullptr},
  }};
  return algorithms;
}

}  // namespace

template <class T> std::span<const CpuAlgorithm<T>> cpu_algorithms() { return registry<T>(); }

template <class T> const CpuAlgorithm<T>* find_cpu_algorithm(std::string_view name) {
  for (const auto& a : registry<T>())
    if (a.info.name == name) return &a;
  return nullptr;
}

template <class T> bool is_correctly_rounded(const CpuAlgorithm<T>& a) { return a.bound == &bound_exact<T>; }

template <class T> SumResult<T> pairwise_with_base(std::span<const T> x, std::size_t base) {
  return {pairwise_sum<T>(x, base), 0, base == 1 ? "" : "base case " + std::to_string(base)};
}
template <class T> double pairwise_bound(std::size_t base, const BoundInput& in) {
  return bound::tree(format_of<T>(), pairwise_depth(in.n, base), in);
}

template std::span<const CpuAlgorithm<float>> cpu_algorithms<float>();
template std::span<const CpuAlgorithm<double>> cpu_algorithms<double>();
template const CpuAlgorithm<float>* find_cpu_algorithm<float>(std::string_view);
template const CpuAlgorithm<double>* find_cpu_algorithm<double>(std::string_view);
template bool is_correctly_rounded<float>(const CpuAlgorithm<float>&);
template bool is_correctly_rounded<double>(const CpuAlgorithm<double>&);
template SumResult<float> pairwise_with_base<float>(std::span<const float>, std::size_t);
template SumResult<double> pairwise_with_base<double>(std::span<const double>, std::size_t);
template double pairwise_bound<float>(std::size_t, const BoundInput&);
template double pairwise_bound<double>(std::size_t, const BoundInput&);

}  // namespace sumlab
