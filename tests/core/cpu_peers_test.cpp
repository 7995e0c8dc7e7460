// core/cpu_peers: every peer sums within the bound of any order of n-1 additions (checked against
// the exact sum), on awkward sizes and thread counts; one thread gives a plain loop's bits where
// the peer's one-thread order is a plain loop.
#include "core/cpu_peers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/generators.hpp"

namespace sumlab {
namespace {

template <class T> T plain_loop(const std::vector<T>& x) {
  T s = T(0);
  for (T v : x) s += v;
  return s;
}

template <class T> double sum_abs(const std::vector<T>& x) {
  std::vector<T> a(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) a[i] = std::fabs(x[i]);
  return static_cast<double>(exact_sum<T>(std::span<const T>(a)));
}

template <class T> void within_serial_bound(Distribution d) {
  DistributionSpec spec;
  spec.kind = d;
  const int hw = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{31}, std::size_t{33},
                        std::size_t{1000}, std::size_t{4099}, std::size_t{(1 << 17) + 5}}) {
    const std::vector<T> x = generate<T>(spec, 7, n);
    const std::span<const T> xs(x);
    // The exact sum, and the bound gamma(n-1) sum|x| on |computed - exact|: exact - computed is
    // taken in the superaccumulator and rounded once, so the comparison itself adds no error
    // beyond one rounding (covered by the factor 1 + 2u).
    Superaccumulator<T> exact;
    exact.add(xs);
    const double bound = gamma<T>(static_cast<double>(n > 0 ? n - 1 : 0)) * sum_abs(x) * (1 + 2 * unit_roundoff<T>());
    for (const auto& peer : cpu_peers<T>()) {
      for (int threads : {1, 2, 3, hw}) {
        const T v = peer.sum(xs, threads);
        Superaccumulator<T> r = exact;
        r.add(-v);
        const double err = std::fabs(static_cast<double>(r.round()));
        EXPECT_LE(err, bound) << peer.info.name << " n=" << n << " threads=" << threads << " " << to_string(d);
        if (n == 0) {
          EXPECT_EQ(to_bits(v), to_bits(T(0))) << peer.info.name;
        }
      }
    }
  }
}

TEST(CpuPeers, WithinTheAnyOrderBoundFloat) {
  within_serial_bound<float>(Distribution::uniform);
  within_serial_bound<float>(Distribution::cancellation);
}

TEST(CpuPeers, WithinTheAnyOrderBoundDouble) {
  within_serial_bound<double>(Distribution::normal);
  within_serial_bound<double>(Distribution::lognormal);
}

TEST(CpuPeers, OneThreadIsAPlainLoopWhereItShouldBe) {
  DistributionSpec spec;
  spec.kind = Distribution::cancellation;
  for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{100003}}) {
    const std::vector<float> x = generate<float>(spec, 3, n);
    const std::span<const float> xs(x);
    const float loop = plain_loop(x);
    // std::accumulate is the standard's left fold; an OpenMP reduction on one thread is one chunk
    // summed left to right, combined with the +0 it started from; std::reduce with one TBB worker
    // still splits the range, so it is only required to be a valid order (checked above).
    EXPECT_EQ(to_bits(find_cpu_peer<float>("std_accumulate")->sum(xs, 1)), to_bits(loop)) << n;
    EXPECT_EQ(to_bits(find_cpu_peer<float>("omp_reduction")->sum(xs, 1)), to_bits(loop)) << n;
    // The thread count is not part of std::accumulate's or Eigen's order.
    for (const char* name : {"std_accumulate", "eigen_sum"}) {
      const auto* p = find_cpu_peer<float>(name);
      EXPECT_FALSE(p->takes_threads) << name;
      EXPECT_EQ(to_bits(p->sum(xs, 1)), to_bits(p->sum(xs, 4))) << name;
    }
  }
}

TEST(CpuPeers, RegistryNamesAndDeclarations) {
  EXPECT_EQ(cpu_peer_names(), "std_accumulate, std_reduce_par, omp_reduction, eigen_sum");
  EXPECT_EQ(find_cpu_peer<double>("nope"), nullptr);
  EXPECT_EQ(find_cpu_peer<double>("std_reduce_par")->info.determinism, Determinism::not_deterministic);
  EXPECT_EQ(find_cpu_peer<double>("std_accumulate")->info.determinism, Determinism::shape_invariant);
  for (const char* name : {"std_accumulate", "std_reduce_par", "omp_reduction", "eigen_sum"})
    EXPECT_FALSE(cpu_peer_backend(name).empty()) << name;
}

}  // namespace
}  // namespace sumlab
