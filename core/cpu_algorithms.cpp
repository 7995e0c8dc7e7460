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

double n_minus_1(std::size_t n) { return n > 0 ? static_cast<double>(n - 1) : 0.0; }

template <class T> double bound_serial(std::size_t n, double sum_abs, double) {
  return gamma<T>(n_minus_1(n)) * sum_abs;
}
template <class T> double bound_serial_wide(std::size_t n, double sum_abs, double abs_sum) {
  using W = typename Wider<T>::type;
  const double uw = std::ldexp(1.0, -std::numeric_limits<W>::digits);
  const double ku = n_minus_1(n) * uw;
  const double gw = ku < 1 ? ku / (1 - ku) : INFINITY;
  return unit_roundoff<T>() * abs_sum + (1 + unit_roundoff<T>()) * gw * sum_abs;
}
template <class T> double bound_serial_bf16(std::size_t n, double sum_abs, double) {
  // Each addend is first rounded to bf16 (relative error <= 2^-8), then the chain of n-1 bf16
  // roundings: |err| <= (2^-8 + (1 + 2^-8) gamma^{bf16}_{n-1}) sum|x|.
  const double u = std::ldexp(1.0, -bfloat16_precision);
  const double ku = n_minus_1(n) * u;
  const double g = ku < 1 ? ku / (1 - ku) : INFINITY;
  return (u + (1 + u) * g) * sum_abs;
}
template <class T> double bound_pairwise(std::size_t n, double sum_abs, double) {
  return gamma<T>(static_cast<double>(pairwise_depth(n))) * sum_abs;
}
template <class T> double bound_numpy(std::size_t n, double sum_abs, double) {
  return gamma<T>(static_cast<double>(numpy_pairwise_depth(n))) * sum_abs;
}
template <class T> double bound_kahan(std::size_t n, double sum_abs, double) {
  const double u = unit_roundoff<T>();
  return (2 * u + 4 * static_cast<double>(n) * u * u) * sum_abs;
}
template <class T> double bound_neumaier(std::size_t n, double sum_abs, double abs_sum) {
  const double u = unit_roundoff<T>();
  return u * abs_sum + 4 * static_cast<double>(n) * u * u * sum_abs;
}
template <class T> double bound_fixed(std::size_t, double, double abs_sum) {
  // The final rounding, as bound_exact (plus the quantisation term m 2^(-k-1) the result reports in
  // extra_error_bound, and u times it: the rounded quantity is up to that far from s).
  return std::max(unit_roundoff<T>() * abs_sum, std::ldexp(1.0, FloatTraits<T>::min_subnormal_exp - 1));
}
// Correct rounding: at most half an ulp of the result, i.e. u|s|, or half the smallest subnormal.
template <class T> double bound_exact(std::size_t, double, double abs_sum) {
  return std::max(unit_roundoff<T>() * abs_sum, std::ldexp(1.0, FloatTraits<T>::min_subnormal_exp - 1));
}

template <class T> const std::array<CpuAlgorithm<T>, 10>& registry() {
  static const std::array<CpuAlgorithm<T>, 10> algorithms{{
      {{"serial", "left to right in the input precision",
        "((x0 + x1) + x2) + ... one dependency chain", "gamma(n-1) * sum|x|",
        Determinism::run_to_run},
       run_serial<T>, bound_serial<T>},
      {{"serial_wide", "left to right in a wider accumulator (float->double, double->long double)",
        "((x0 + x1) + x2) + ... in the wider type, rounded once to the input type at the end",
        "u|s| + gamma_wide(n-1) * sum|x|", Determinism::run_to_run},
       run_serial_wide<T>, bound_serial_wide<T>},
      {{"serial_bf16", "left to right with a bfloat16 accumulator (8-bit significand)",
        "((x0 + x1) + x2) + ..., every partial sum rounded to bfloat16",
        "(2^-8 + gamma_bf16(n-1)) * sum|x|", Determinism::run_to_run},
       run_serial_bf16<T>, bound_serial_bf16<T>},
      {{"pairwise", "recursive halving down to single elements (the textbook tree)",
        "sum(x[0:n/2]) + sum(x[n/2:n]), recursively", "gamma(ceil(log2 n)) * sum|x|",
        Determinism::run_to_run},
       run_pairwise<T>, bound_pairwise<T>},
      {{"pairwise_b128", "recursive halving down to serial runs of <=128 elements",
        "sum(x[0:n/2]) + sum(x[n/2:n]) down to runs of <=128, each run serial",
        "gamma(127 + ceil(log2(n/128))) * sum|x|", Determinism::run_to_run},
       [](std::span<const T> x) { return pairwise_with_base<T>(x, 128); },
       [](std::size_t n, double sum_abs, double) { return pairwise_bound<T>(n, 128, sum_abs); }},
      {{"numpy_pairwise", "NumPy's blocked pairwise sum: 8 partial sums over blocks of <=128",
        "halve (at multiples of 8) down to <=128, then 8 strided chains and a 3-level tree",
        "gamma(depth) * sum|x|, depth ~ n_leaf/8 + 2 + log2(n/128)", Determinism::run_to_run},
       run_numpy<T>, bound_numpy<T>},
      {{"kahan", "Kahan's compensated sum (running correction of the lost low bits)",
        "serial; y = x - c; t = s + y; c = (t - s) - y; s = t", "(2u + 4nu^2) * sum|x|",
        Determinism::run_to_run},
       run_kahan<T>, bound_kahan<T>},
      {{"neumaier", "Neumaier's (Kahan-Babuska) sum: exact error of each add kept aside",
        "serial; t = s + x; c += Fast2Sum error of (s, x); s = t; result s + c",
        "u|s| + 4nu^2 * sum|x|", Determinism::run_to_run},
       run_neumaier<T>, bound_neumaier<T>},
      {{"fixed_point", "integers at a binary scale from max|x|, added exactly in 128 bits",
        "q_i = round(x_i * 2^k) in int64, any order, integer sum * 2^-k rounded once",
        "m * 2^(-k-1) + u|s| (m = elements that lost low bits)", Determinism::shape_invariant},
       run_fixed<T>, bound_fixed<T>},
      {{"exact", "superaccumulator over the whole exponent range, correctly rounded",
        "integer limbs from 2^emin_sub upward, any order, rounded once (to nearest even)",
        "u|s| (correctly rounded: at most half an ulp)",
        Determinism::shape_invariant},
       run_exact<T>, bound_exact<T>},
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

template <class T> SumResult<T> pairwise_with_base(std::span<const T> x, std::size_t base) {
  return {pairwise_sum<T>(x, base), 0, base == 1 ? "" : "base case " + std::to_string(base)};
}
template <class T> double pairwise_bound(std::size_t n, std::size_t base, double sum_abs) {
  return gamma<T>(static_cast<double>(pairwise_depth(n, base))) * sum_abs;
}

template std::span<const CpuAlgorithm<float>> cpu_algorithms<float>();
template std::span<const CpuAlgorithm<double>> cpu_algorithms<double>();
template const CpuAlgorithm<float>* find_cpu_algorithm<float>(std::string_view);
template const CpuAlgorithm<double>* find_cpu_algorithm<double>(std::string_view);
template SumResult<float> pairwise_with_base<float>(std::span<const float>, std::size_t);
template SumResult<double> pairwise_with_base<double>(std::span<const double>, std::size_t);
template double pairwise_bound<float>(std::size_t, std::size_t, double);
template double pairwise_bound<double>(std::size_t, std::size_t, double);

}  // namespace sumlab
