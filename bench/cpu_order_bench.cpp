// ns per element of every CPU algorithm in the registry (core/cpu_algorithms.hpp), float and double,
// at n = 10^7 (Google Benchmark; not a test). The peers measured in the same run are in
// bench/cpu_sums_bench.cpp: the ordered double loop, the exact sum's phases, fixed point, MPFR.
// Names: "registry/<algorithm>/<dtype>".
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_algorithms.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"

namespace {

template <class T> const std::vector<T>& data() {
  static const std::vector<T> x = sumlab::generate<T>(sumlab::DistributionSpec{}, 1, 10'000'000);
  return x;
}

template <class T> void run(benchmark::State& state, const sumlab::CpuAlgorithm<T>* a) {
  const auto& x = data<T>();
  for (auto _ : state) {
    T s = a->sum(std::span<const T>(x)).value;
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(x.size()));
  state.counters["ns_per_element"] = benchmark::Counter(
      static_cast<double>(x.size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <class T> int register_all() {
  for (const auto& a : sumlab::cpu_algorithms<T>())
    benchmark::RegisterBenchmark(("registry/" + std::string(a.info.name) + "/" + std::string(sumlab::FloatTraits<T>::dtype)).c_str(),
                                 run<T>, &a)
        ->Unit(benchmark::kMillisecond);
  return 0;
}

const int registered_float = register_all<float>();
const int registered_double = register_all<double>();

}  // namespace
