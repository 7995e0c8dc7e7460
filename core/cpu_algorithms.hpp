#pragma once
// The registry of CPU summation algorithms: one place that names each algorithm, describes it in
// one line, states its order and bound, and runs it. The CLI, the studies and the report labels
// all take their names from here.
#include <cstddef>
#include <span>
#include <string_view>

#include "core/determinism.hpp"
#include "core/error_bound.hpp"
#include "core/sum_result.hpp"
#include "core/order_model/order_trace.hpp"

namespace sumlab {

struct AlgorithmInfo {
  std::string_view name;
  std::string_view summary;  // one line, for --help and reports
  std::string_view order;    // the order of operations
  BoundDoc bound;            // the error bound's formula and the theorem it comes from
  Determinism determinism;   // on one CPU thread everything is repeatable; what matters is
                             // whether another order of the same elements changes the bits
};

template <class T> struct CpuAlgorithm {
  AlgorithmInfo info;
  SumResult<T> (*sum)(std::span<const T> x);
  // The bound on |result - exact sum| for this input (core/error_bound.hpp); +inf where the
  // theorem's condition fails. in.quantisation is the result's extra_error_bound.
  double (*bound)(const BoundInput& in);
  // The same algorithm over traced numbers (its tree recorded as it runs, for `sumlab explain`);
  // nullptr where the algorithm is not a tree of plain additions (compensated, integer, bf16).
  order_model::TracedNumber<T> (*traced)(std::span<const order_model::TracedNumber<T>> x);
};

template <class T> std::span<const CpuAlgorithm<T>> cpu_algorithms();
// nullptr when no algorithm has that name.
template <class T> const CpuAlgorithm<T>* find_cpu_algorithm(std::string_view name);
// Whether a's bound is a correctly rounded result's (bound::correctly_rounded): its error is one
// final rounding at every n, so it has no growth with n to measure.
template <class T> bool is_correctly_rounded(const CpuAlgorithm<T>& a);

// Pairwise summation with a caller-chosen base case (the registry's "pairwise" uses base 1).
template <class T> SumResult<T> pairwise_with_base(std::span<const T> x, std::size_t base);
template <class T> double pairwise_bound(std::size_t base, const BoundInput& in);

}  // namespace sumlab
