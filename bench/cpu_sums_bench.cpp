// ns per element at n = 10^7 of the order-independent CPU sums against a plain serial loop and the
// MPFR reference (Google Benchmark; not a test). The exact sum's goal is <= 1.2x the serial double
// loop, on the same data (mt19937_64 seed 1, uniform [0,1)). Every registry algorithm, on the lab's
// own uniform generator: bench/cpu_order_bench.cpp.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/fixed_point_sum.hpp"
#include "reference/mpfr_sum.hpp"

namespace {

constexpr std::size_t kN = 10'000'000;

// Generated once per (type, range).
template <class T, int lo> const std::vector<T>& data() {
  static const std::vector<T> x = [] {
    std::vector<T> v(kN);
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(lo, 1.0);
    for (auto& e : v) e = static_cast<T>(u(rng));
    return v;
  }();
  return x;
}

void per_element(benchmark::State& state, std::size_t n) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(n));
  // Seconds per element, printed with an SI prefix ("1.2n").
  state.counters["ns_per_element"] = benchmark::Counter(
      static_cast<double>(n),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The baseline: one accumulator of type Acc, one dependent add per element, in order.
template <class T, class Acc, int lo> void BM_serial_loop(benchmark::State& state) {
  const auto& x = data<T, lo>();
  for (auto _ : state) {
    Acc s = 0;
    for (const T v : x) s += v;
    benchmark::DoNotOptimize(s);
  }
  per_element(state, x.size());
}

template <class T, int lo> void BM_exact(benchmark::State& state) {
  const auto& x = data<T, lo>();
  for (auto _ : state) {
    T s = sumlab::exact_sum<T>(std::span<const T>(x));
    benchmark::DoNotOptimize(s);
  }
  per_element(state, x.size());
}

template <class T, int lo> void BM_fixed_point(benchmark::State& state) {
  const auto& x = data<T, lo>();
  for (auto _ : state) {
    auto r = sumlab::fixed_point_sum<T>(std::span<const T>(x));
    benchmark::DoNotOptimize(r.value);
  }
  per_element(state, x.size());
}

template <class T, int lo> void BM_mpfr(benchmark::State& state) {
  const auto& x = data<T, lo>();
  for (auto _ : state) {
    T s = sumlab::reference::correctly_rounded_sum<T>(std::span<const T>(x));
    benchmark::DoNotOptimize(s);
  }
  per_element(state, x.size());
}

}  // namespace

BENCHMARK(BM_serial_loop<double, double, 0>)->Name("serial/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_serial_loop<float, double, 0>)
    ->Name("serial_double_acc/float")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_exact<double, 0>)->Name("exact/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_exact<float, 0>)->Name("exact/float")->Unit(benchmark::kMillisecond);
// Mixed signs: both sign banks of the superaccumulator in use.
BENCHMARK(BM_serial_loop<double, double, -1>)
    ->Name("serial/double/signed")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_exact<double, -1>)->Name("exact/double/signed")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fixed_point<double, 0>)->Name("fixed_point/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fixed_point<float, 0>)->Name("fixed_point/float")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mpfr<double, 0>)->Name("mpfr/double")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mpfr<float, 0>)->Name("mpfr/float")->Unit(benchmark::kMillisecond);
