#pragma once
// CPU peers of the GPU kernels for the determinism study: the sums a C++ user reaches for first.
// Their "launch shape" is the thread count. They are measured, never modelled: the grouping of a
// parallel reduction belongs to its runtime (TBB's work stealing, the OpenMP runtime's combine),
// so the study runs each one R times per thread count and counts the bit patterns it gets.
//
//   std_accumulate  std::accumulate(x, T(0)): the standard fixes a left fold, ((0 + x0) + x1) + ...
//   std_reduce_par  std::reduce(std::execution::par, x, T(0)): GENERALIZED_SUM, any grouping. In
//                   libstdc++ it runs on TBB's parallel_reduce (auto partitioner: the split points
//                   follow work stealing), limited to `threads` workers by tbb::global_control.
//                   Without TBB at build time libstdc++ runs it serially (available() says so).
//   omp_reduction   #pragma omp parallel for reduction(+:s) num_threads(t) schedule(static): each
//                   thread sums one contiguous chunk left to right; the runtime combines the
//                   private partials in an unspecified order (GCC: as threads finish).
//   eigen_sum       Eigen::Map<const Vector>(x).sum(): single-threaded, vectorised; the order
//                   follows the packet size of the build (SSE2: 4 floats / 2 doubles) and the
//                   alignment of x (an unaligned head is summed separately), not the thread count.
//
// Assumptions: IEEE binary32/binary64 with round-to-nearest-even; the translation unit is built
// with -ffp-contract=off and no -ffast-math (cmake/SumlabFlags.cmake), so the compiler does not
// reassociate the serial parts; Eigen's packet reassociation is Eigen's own (it is a peer).
#include <span>
#include <string>

#include "core/cpu_algorithms.hpp"

namespace sumlab {

template <class T> struct CpuPeer {
  // name, summary, order, bound, and the declared class: what the library documents (the study
  // compares it with what it measures). std::reduce and OpenMP promise no order at all, so they are
  // declared not_deterministic; std::accumulate and Eigen do not depend on the thread count.
  AlgorithmInfo info;
  bool takes_threads;  // false: the thread count changes nothing (the study runs it at 1 thread)
  T (*sum)(std::span<const T> x, int threads);
};

template <class T> std::span<const CpuPeer<T>> cpu_peers();
// nullptr when no peer has that name.
template <class T> const CpuPeer<T>* find_cpu_peer(std::string_view name);
// "std_accumulate, std_reduce_par, omp_reduction, eigen_sum".
std::string cpu_peer_names();

// Whether the peer really runs in parallel in this build, and how: "TBB 2021.8 (libstdc++ PSTL)",
// "OpenMP 201511", or why not ("no TBB at build time: libstdc++ runs std::reduce serially").
std::string cpu_peer_backend(std::string_view name);

}  // namespace sumlab
