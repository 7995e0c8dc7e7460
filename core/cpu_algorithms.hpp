#pragma once
// The registry of CPU summation algorithms: one place that names each algorithm, describes it in
// one line, states its order and bound, and runs it. The CLI, the studies and the report labels
// all take their names from here.
#include <cstddef>
#include <span>
#include <string_view>

#include "core/determinism.hpp"
#include "core/sum_result.hpp"

namespace sumlab {

struct AlgorithmInfo {
  std::string_view name;
  std::string_view summary;  // one line, for --help and reports
  std::string_view order;    // the order of operations
  std::string_view bound;    // the documented error bound, as text
  Determinism determinism;   // on one CPU thread everything is repeatable; what matters is
                             // whether another order of the same elements changes the bits
};

template <class T> struct CpuAlgorithm {
  AlgorithmInfo info;
  SumResult<T> (*sum)(std::span<const T> x);
  // The documented absolute error bound for this input: n elements, sum|x_i| and |sum x_i|
  // (exact values, rounded to double), plus the result's own extra_error_bound.
  double (*bound)(std::size_t n, double sum_abs, double abs_sum);
};

template <class T> std::span<const CpuAlgorithm<T>> cpu_algorithms();
// nullptr when no algorithm has that name.
template <class T> const CpuAlgorithm<T>* find_cpu_algorithm(std::string_view name);

// Pairwise summation with a caller-chosen base case (the registry's "pairwise" uses base 1).
template <class T> SumResult<T> pairwise_with_base(std::span<const T> x, std::size_t base);
template <class T> double pairwise_bound(std::size_t n, std::size_t base, double sum_abs);

}  // namespace sumlab
