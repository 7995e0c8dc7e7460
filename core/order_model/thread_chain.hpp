#pragma once
// Stage 1 of the model: the element-to-thread mapping and each thread's sequential chain.
//
// Thread g (= block * blockDim + lane index in the grid) starts from Op::identity() and applies
// `step` to its elements in the order the kernel visits them (core/launch_shape.hpp defines the two
// mappings). The model streams through x once, in index order, updating each owner's accumulator:
// every thread's chain is increasing in the index, so the order of the steps applied to any one
// accumulator is exactly the kernel's, while the memory access stays sequential (a thread-by-thread
// walk would stride through x and be ~100x slower for large n).
//
// Only "active" threads (those that own at least one element) are materialized; the others hold
// identity(), which the caller knows without storing 2^30 of them.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/launch_shape.hpp"

namespace sumlab::order_model {

// Number of leading threads (0..threads) that own at least one element; threads at or beyond it
// own nothing under either mapping.
inline std::int64_t active_threads(std::int64_t n, std::int64_t threads, int vector,
                                   Mapping mapping) {
  if (n <= 0) return 0;
  if (mapping == Mapping::grid_stride) return std::min(threads, (n + vector - 1) / vector);
  const std::int64_t chunk = contiguous_chunk(n, threads, vector);
  return std::min(threads, (n + chunk - 1) / chunk);
}

// acc[g] for g < active_threads(...), each the result of g's chain. Elem is Op::In for the first
// pass and Op::Acc for a pass over partials; Step is Op::add or Op::combine.
template <class Acc, class Elem, class Step>
std::vector<Acc> thread_partials(std::span<const Elem> x, std::int64_t threads, int vector,
                                 Mapping mapping, Acc identity, Step step) {
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<Acc> acc(static_cast<std::size_t>(active_threads(n, threads, vector, mapping)),
                       identity);
  if (n == 0) return acc;
  if (mapping == Mapping::grid_stride) {
    // Vector j = i / vector belongs to thread j mod threads; one sweep of `threads` vectors is one
    // trip of the grid-stride loop.
    const std::int64_t sweep = threads * vector;
    for (std::int64_t base = 0; base < n; base += sweep) {
      const std::int64_t end = std::min(n, base + sweep);
      std::int64_t i = base;
      for (std::int64_t t = 0; i < end; ++t) {
        Acc a = acc[static_cast<std::size_t>(t)];
        for (int v = 0; v < vector && i < end; ++v, ++i) a = step(a, x[static_cast<std::size_t>(i)]);
        acc[static_cast<std::size_t>(t)] = a;
      }
    }
  } else {
    const std::int64_t chunk = contiguous_chunk(n, threads, vector);
    for (std::size_t t = 0; t < acc.size(); ++t) {
      const std::int64_t begin = static_cast<std::int64_t>(t) * chunk;
      const std::int64_t end = std::min(n, begin + chunk);
      Acc a = identity;
      for (std::int64_t i = begin; i < end; ++i) a = step(a, x[static_cast<std::size_t>(i)]);
      acc[t] = a;
    }
  }
  return acc;
}

}  // namespace sumlab::order_model
