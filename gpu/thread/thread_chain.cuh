#pragma once
// Thread level: which elements a thread owns (core/launch_shape.hpp's mappings) and its sequential
// chain over them. The CPU model of this file is core/order_model/thread_chain.hpp.
#include <cstdint>

#include "core/launch_shape.hpp"

namespace sumlab::gpu::detail {

// V elements loaded as one aligned vector (LDG.64/.128 for float2/float4, two .128 for 4 doubles).
// The launcher checks the base address is aligned to V * sizeof(T).
template <class T, int V> struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Vectors a grid-stride thread loads ahead: 64 bytes in flight per thread (4 float4 loads).
template <class T, int V> inline constexpr int load_ahead = 64 / int(sizeof(T) * V) > 1 ? 64 / int(sizeof(T) * V) : 1;

// Calls f(x) for the elements thread g of `threads` owns, in its chain order: grid-stride over
// V-element vectors (the trailing partial vector by scalar loads, by its owner, last), or a
// contiguous chunk of contiguous_chunk(n, threads, V) elements.
template <int V, class T, class F>
__device__ __forceinline__ void for_each_owned(const T* __restrict__ d_in, std::int64_t n, std::int64_t g,
                                               std::int64_t threads, Mapping m, F&& f) {
  const Vec<T, V>* __restrict__ vin = reinterpret_cast<const Vec<T, V>*>(d_in);
  if (m == Mapping::grid_stride) {
    const std::int64_t nvec = n / V;
    std::int64_t j = g;
    // Loads ahead: U of the thread's vectors are loaded before the first of them is used, so each
    // thread keeps U * V * sizeof(T) bytes in flight instead of one vector (HBM needs many bytes
    // in flight per SM to reach its bandwidth). The elements still reach f in chain order, one
    // vector after the other, so this changes the time and never the bits.
    constexpr int U = load_ahead<T, V>;
    for (; j + std::int64_t(U - 1) * threads < nvec; j += std::int64_t(U) * threads) {
      Vec<T, V> v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = vin[j + u * threads];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int k = 0; k < V; ++k) f(v[u].v[k]);
    }
    for (; j < nvec; j += threads) {
      const Vec<T, V> v = vin[j];
#pragma unroll
      for (int k = 0; k < V; ++k) f(v.v[k]);
    }
    if (V > 1 && nvec * V < n && nvec % threads == g)
      for (std::int64_t i = nvec * V; i < n; ++i) f(d_in[i]);
  } else {
    const std::int64_t chunk = contiguous_chunk(n, threads, V);
    const std::int64_t begin = g * chunk;
    const std::int64_t end = begin + chunk < n ? begin + chunk : n;
    std::int64_t i = begin;
    for (; i + V <= end; i += V) {
      const Vec<T, V> v = vin[i / V];
#pragma unroll
      for (int k = 0; k < V; ++k) f(v.v[k]);
    }
    for (; i < end; ++i) f(d_in[i]);
  }
}

// The thread's chain: acc = identity; acc = Op::add(acc, x) for each owned x in order.
template <class Op, int V>
__device__ __forceinline__ typename Op::Acc thread_chain(const typename Op::In* __restrict__ d_in,
                                                         std::int64_t n, std::int64_t g,
                                                         std::int64_t threads, Mapping m) {
  typename Op::Acc acc = Op::identity();
  for_each_owned<V>(d_in, n, g, threads, m, [&acc](typename Op::In x) { acc = Op::add(acc, x); });
  return acc;
}

}  // namespace sumlab::gpu::detail
