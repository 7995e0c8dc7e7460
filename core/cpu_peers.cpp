#include "core/cpu_peers.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstddef>
#include <execution>
#include <numeric>

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(SUMLAB_HAVE_TBB)
#include <tbb/global_control.h>
#include <tbb/version.h>
#endif

namespace sumlab {
namespace {

template <class T> T run_accumulate(std::span<const T> x, int) {
  return std::accumulate(x.begin(), x.end(), T(0));
}

template <class T> T run_reduce_par(std::span<const T> x, int threads) {
#if defined(SUMLAB_HAVE_TBB)
  // Process-wide cap on TBB workers while it lives: the parallel reduce below sees `threads`.
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(std::max(1, threads)));
#else
  (void)threads;
#endif
  return std::reduce(std::execution::par, x.begin(), x.end(), T(0));
}

template <class T> T run_omp(std::span<const T> x, int threads) {
  T s = T(0);
  const auto n = static_cast<std::ptrdiff_t>(x.size());
  const T* p = x.data();
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : s) num_threads(std::max(1, threads)) schedule(static)
#else
  (void)threads;
#endif
  for (std::ptrdiff_t i = 0; i < n; ++i) s += p[i];
  return s;
}

template <class T> T run_eigen(std::span<const T> x, int) {
  if (x.empty()) return T(0);
  const Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> v(x.data(), static_cast<Eigen::Index>(x.size()));
  return v.sum();
}

// Any order of n - 1 additions: |error| <= gamma(n-1) sum|x| (Higham, ASNA 4.2). Every peer is
// some order of n - 1 additions (plus additions of +0, which are exact).
constexpr BoundDoc kAnyOrderBound{"gamma(n-1) S: any summation order",
                                  "Higham 2002, Sec. 4.2: no term of any summation tree meets more than n-1 additions"};

template <class T> const std::array<CpuPeer<T>, 4>& registry() {
  static const std::array<CpuPeer<T>, 4> peers{{
      {{"std_accumulate", "std::accumulate: the standard's left fold, one thread",
        "((0 + x0) + x1) + ... one dependency chain", kAnyOrderBound, Determinism::shape_invariant},
       false, run_accumulate<T>},
      {{"std_reduce_par", "std::reduce(std::execution::par): any grouping (libstdc++: TBB parallel_reduce)",
        "TBB splits the range as work stealing goes, serial leaves, partials joined left to right",
        kAnyOrderBound, Determinism::not_deterministic},
       true, run_reduce_par<T>},
      {{"omp_reduction", "OpenMP parallel for reduction(+), static schedule",
        "thread t sums chunk t left to right; partials combined in the runtime's order",
        kAnyOrderBound, Determinism::not_deterministic},
       true, run_omp<T>},
      {{"eigen_sum", "Eigen's VectorX::sum(): vectorised by packets, one thread",
        "packet-wide partial sums (SSE2: 4 floats / 2 doubles), unrolled, then a horizontal add",
        kAnyOrderBound, Determinism::shape_invariant},
       false, run_eigen<T>},
  }};
  return peers;
}

}  // namespace

template <class T> std::span<const CpuPeer<T>> cpu_peers() { return registry<T>(); }

template <class T> const CpuPeer<T>* find_cpu_peer(std::string_view name) {
  for (const auto& p : registry<T>())
    if (p.info.name == name) return &p;
  return nullptr;
}

std::string cpu_peer_names() {
  std::string out;
  for (const auto& p : registry<float>()) out += (out.empty() ? "" : ", ") + std::string(p.info.name);
  return out;
}

std::string cpu_peer_backend(std::string_view name) {
  if (name == "std_reduce_par") {
#if defined(SUMLAB_HAVE_TBB)
    return "TBB " TBB_VERSION_STRING " (libstdc++ parallel STL), threads capped by tbb::global_control";
#else
    return "no TBB at build time: libstdc++ runs std::reduce(par) serially";
#endif
  }
  if (name == "omp_reduction") {
#if defined(_OPENMP)
    return "OpenMP " + std::to_string(_OPENMP) + ", num_threads(t)";
#else
    return "no OpenMP at build time: the pragma is ignored, one thread";
#endif
  }
  if (name == "eigen_sum")
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION) + ", packet of " +
           std::to_string(Eigen::internal::packet_traits<float>::size) + " floats";
  if (name == "std_accumulate") return "libstdc++, one thread";
  return "";
}

template std::span<const CpuPeer<float>> cpu_peers<float>();
template std::span<const CpuPeer<double>> cpu_peers<double>();
template const CpuPeer<float>* find_cpu_peer<float>(std::string_view);
template const CpuPeer<double>* find_cpu_peer<double>(std::string_view);

}  // namespace sumlab
