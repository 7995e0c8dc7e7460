// ns per element of the order-dependent CPU sums at n = 10^7 (Google Benchmark; not a test).
// Peers measured in the same run: bench/cpu_sums_bench.cpp (serial double loop, exact, fixed, MPFR).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/kahan_sum.hpp"
#include "core/neumaier_sum.hpp"
#include "core/numpy_pairwise_sum.hpp"
#include "core/pairwise_sum.hpp"
#include "core/serial_sum.hpp"

namespace {

template <class T> const std::vector<T>& data() {
  static const std::vector<T> x = [] {
    std::vector<T> v(10'000'000);
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& e : v) e = static_cast<T>(u(rng));
    return v;
  }();
  return x;
}

template <class T, T (*F)(std::span<const T>)> void BM_sum(benchmark::State& state) {
  const auto& x = data<T>();
  for (auto _ : state) {
    T s = F(x);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(x.size()));
  state.counters["ns_per_element"] = benchmark::Counter(
      static_cast<double>(x.size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <class T> T pairwise1(std::span<const T> x) { return sumlab::pairwise_sum<T>(x, 1); }
template <class T> T pairwise128(std::span<const T> x) { return sumlab::pairwise_sum<T>(x, 128); }

}  // namespace

BENCHMARK(BM_sum<float, sumlab::serial_sum<float>>)->Name("serial/float")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum<double, pairwise1<double>>)->Name("pairwise_base1/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum<double, pairwise128<double>>)->Name("pairwise_base128/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum<double, sumlab::numpy_pairwise_sum<double>>)->Name("numpy_pairwise/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum<double, sumlab::kahan_sum<double>>)->Name("kahan/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sum<double, sumlab::neumaier_sum<double>>)->Name("neumaier/double")->Unit(benchmark::kMillisecond);
